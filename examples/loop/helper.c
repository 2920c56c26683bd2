// A loop calling a helper on a fixed path; `units` sets how long an iteration runs, so the same
// program has short (units 0: ~40 instructions) and long (units 2000: ~2 ms) iterations.
//   loop_helper [SECONDS [UNITS]]
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t iteration, sink;
static unsigned units;

__attribute__((noinline)) uint64_t mix(uint64_t x) {
  x ^= x >> 13;
  x *= 0x9e3779b97f4a7c15ull;
  x ^= x >> 7;
  return x;
}

__attribute__((noinline)) void spin(unsigned n) {
  for (unsigned i = 0; i < n; i++)
    for (unsigned j = 0; j < 1000; j++)
      sink += j;
}

__attribute__((noinline)) void body(uint64_t i) {
  uint64_t a = mix(i);
  spin(units);
  uint64_t b = mix(a + 1);
  sink += a ^ b;
  iteration++;
}

static double elapsed(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5;
  units = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
  // Short iterations read the clock rarely: where clock_gettime is a system call (a VM's clock
  // source without a vDSO path), reading it every 1024 iterations took 7 % of the loop's time and
  // put samples off its path.
  uint64_t check_mask = units ? 0 : 0xffff;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (uint64_t i = 0;; i++) {
    body(i);
    if ((i & check_mask) == 0 && elapsed(&start) > seconds)
      return 0;
  }
}
