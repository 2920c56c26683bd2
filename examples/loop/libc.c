// A loop calling the C library through the PLT (built with -fno-builtin, so that memcpy and strlen
// stay calls): the samples inside the library are on the path only if the walk follows the PLT
// stubs' jumps into the library functions. The sizes are short (48 bytes) so that glibc's
// vector versions run straight through, with no loop of their own, whatever size their inner
// loops or `rep movsb` start at on the CPU at hand (a loop inside one iteration contradicts a
// single path).
//   loop_libc [SECONDS]
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile uint64_t sink;
char source[4096], copy[4096];

__attribute__((noinline)) void body(uint64_t i) {
  source[i & 31] = (char)('a' + (i & 7));
  memcpy(copy, source, 48); // copy[48] stays 0: strlen finds 48
  sink += strlen(copy) + (uint64_t)copy[i & 31];
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5;
  memset(source, 'a', 2048);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (uint64_t i = 0;; i++) {
    body(i);
    if ((i & 0xfff) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 >
          seconds)
        return 0;
    }
  }
}
