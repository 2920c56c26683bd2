// A loop calling the C library through the PLT (built with -fno-builtin, so that memcpy and strlen
// stay calls): the samples inside the library are on the path only if the walk follows the PLT
// stubs' jumps into the library functions. memcpy moves 96 bytes and strlen finds 24: on this
// project's machines glibc's vector versions then run straight through, with no loop of their own
// (a 2048-byte copy ran its vector loop below the size rep movsb starts at) and no size test
// taken, so the shortest path between two sampled instructions is the one that ran.
//   loop_libc [SECONDS]
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile uint64_t sink;
char source[4096], copy[4096];

__attribute__((noinline)) void body(uint64_t i) {
  source[i & 15] = (char)('a' + (i & 7));
  memcpy(copy, source, 96); // source[24] is 0: strlen finds 24
  sink += strlen(copy) + (uint64_t)copy[i & 15];
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5;
  memset(source, 'a', 2048);
  source[24] = 0;
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
