// A loop whose path changes between iterations (a data-dependent branch picks one of two helpers):
// the reproducibility precondition of spec 000 does not hold, and strobe must say so.
//   loop_varying [SECONDS]
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t iteration, sink;

__attribute__((noinline)) uint64_t left(uint64_t x) { return x * 3 + 1; }
__attribute__((noinline)) uint64_t right(uint64_t x) { return (x >> 1) ^ 0x55; }

__attribute__((noinline)) void step(uint64_t i) {
  uint64_t x = i * 0x9e3779b97f4a7c15ull;
  if ((x >> 61) & 1)
    sink += left(x);
  else
    sink += right(x);
  iteration++;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    for (uint64_t i = 0; i < 100000; i++)
      step(i);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 > seconds)
      return 0;
  }
}
