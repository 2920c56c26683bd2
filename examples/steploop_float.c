// Step-trace fixture (bench/codec_size): a floating-point loop (SSE registers change at every
// instruction), reading an array and keeping a running polynomial.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) double step_work(const double *xs, unsigned long count, unsigned long n) {
  double acc = 0.0, scale = 1.0;
  for (unsigned long i = 0; i < n; ++i) {
    double x = xs[i % count];
    acc = acc * 0.999 + x * scale;
    scale += 0.5e-3;
  }
  return acc;
}

int main(int argc, char **argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  enum { kCount = 1024 };
  static double xs[kCount];
  for (unsigned i = 0; i < kCount; ++i)
    xs[i] = (double)i / 7.0;
  printf("steploop_float: %f\n", step_work(xs, kCount, n));
  return 0;
}
