// Forks a child that exits at once (which GDB follows under `set follow-fork-mode child`), works
// for SECONDS in a function of its own, allocating as it goes, then executes PROGRAM: a capture of
// it ends at the exec, and what it held is named after this program, not after the next one,
// whose code the debugger then holds at the same addresses.
//
// Usage: execs SECONDS PROGRAM [ARG...]
#include "work.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *kept; // still allocated at the exec

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void before_exec(double seconds) {
  kept = malloc(1000);
  // With no time to work, no clock either: the step tests trace from here to the exec, and a
  // single-stepped vDSO clock read may retry for ever where the clock ticks faster than it steps.
  if (seconds <= 0)
    return;
  double end = now() + seconds;
  while (now() < end) {
    work_units(20);
    free(malloc(64));
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: execs SECONDS PROGRAM [ARG...]\n");
    return 2;
  }
  pid_t child = fork();
  if (child == 0)
    _exit(0);
  waitpid(child, NULL, 0);
  before_exec(atof(argv[1]));
  execv(argv[2], argv + 2);
  perror("execs: execv");
  return 1;
}
