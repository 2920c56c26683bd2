// A loop whose body the compiler unrolls: one iteration of `kernel` is a long straight run of
// repeated instruction groups, the case where ordinals, not instruction text, tell them apart.
//   loop_unrolled [SECONDS]
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t iteration;
uint64_t table[64];

__attribute__((noinline)) uint64_t kernel(uint64_t seed) {
  uint64_t acc = seed;
#pragma GCC unroll 16
  for (int k = 0; k < 16; k++)
    acc = acc * 31 + table[k * 4] + (acc >> 3);
  iteration++;
  return acc;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5;
  for (int i = 0; i < 64; i++)
    table[i] = (uint64_t)i * 2654435761u;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  uint64_t acc = 0;
  for (;;) {
    for (int i = 0; i < 100000; i++)
      acc += kernel(acc + (uint64_t)i);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 > seconds)
      return (int)(acc & 1);
  }
}
