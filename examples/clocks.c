// Reads the clock READS times between two markers: a step trace from read_clocks to after_clocks
// goes through the kernel's vDSO, whose clock read may retry for as long as it is single-stepped
// (tests/integration/test_step.py). Prints where the vDSO is first, for the tests.
//
// Usage: clocks [READS]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) void after_clocks(long long total) {
  printf("clocks: %lld\n", total % 1000);
}

__attribute__((noinline)) long long read_clocks(int reads) {
  long long total = 0;
  for (int i = 0; i < reads; i++) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    total += t.tv_nsec;
  }
  return total;
}

static void print_vdso(void) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[512];
  while (maps && fgets(line, sizeof line, maps))
    if (strstr(line, "[vdso]")) {
      unsigned long start = 0, end = 0;
      sscanf(line, "%lx-%lx", &start, &end);
      printf("clocks: vdso %#lx-%#lx\n", start, end);
    }
  if (maps)
    fclose(maps);
  fflush(stdout);
}

int main(int argc, char **argv) {
  print_vdso();
  after_clocks(read_clocks(argc > 1 ? atoi(argv[1]) : 3));
  return 0;
}
