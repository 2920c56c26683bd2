// Fixture that works for SECONDS and then dereferences NULL: the crash must reach the user.
#include "work.h"
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static void spin_for(double seconds) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    work_units(5);
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv) {
  spin_for(argc > 1 ? atof(argv[1]) : 1.0);
  volatile int *null_pointer = NULL;
  return *null_pointer;
}
