// Step-trace fixture (bench/codec_size): an integer loop, the shape of most hot loops: counters,
// sums, shifts and a compare, all in registers.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) unsigned long step_work(unsigned long n) {
  unsigned long sum = 0, mix = 0x9e3779b9;
  for (unsigned long i = 0; i < n; ++i) {
    sum += i * 3;
    mix ^= sum >> 3;
    if (mix & 1)
      sum += 7;
  }
  return sum ^ mix;
}

int main(int argc, char **argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  printf("steploop_int: %lu\n", step_work(n));
  return 0;
}
