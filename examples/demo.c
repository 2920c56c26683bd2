// The demo and accuracy fixture: three functions that take 60 %, 30 % and 10 % of the CPU by
// construction (6, 3 and 1 units of identical work per round). Runs for SECONDS (default 5), or
// forever with 0 so that a debugger can attach to it; with ROUNDS, runs exactly that much work
// instead (benchmarks compare run times of the same work).
#include "work.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void compute_sixty(void) { work_units(6); }
__attribute__((noinline)) void compute_thirty(void) { work_units(3); }
__attribute__((noinline)) void compute_ten(void) { work_units(1); }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5.0;
  unsigned long limit = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
  double start = now();
  unsigned long rounds = 0;
  while (limit ? rounds < limit : (seconds <= 0 || now() - start < seconds)) {
    for (int i = 0; i < 100; i++) {
      compute_sixty();
      compute_thirty();
      compute_ten();
    }
    rounds += 100;
  }
  printf("demo: %lu rounds in %.3f s\n", rounds, now() - start);
  return 0;
}
