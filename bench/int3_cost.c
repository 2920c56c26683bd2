// The raw cost of the trap a heap-tracking breakpoint takes, without any debugger: a child calls a
// function N times and the parent, its ptrace tracer, handles each call the way a debugger would.
//   trap:       the function executes an int3 of its own; the tracer waits for the SIGTRAP and
//               continues (PTRACE_CONT, waitpid): the floor every breakpoint hit pays.
//   breakpoint: the tracer planted an int3 on the function's entry; at each hit it reads the
//               registers, moves rip back onto the breakpoint, puts the original byte back,
//               single-steps over it, re-plants the int3 and continues, as GDB and LLDB do.
//   step:       the single-step of the breakpoint variant alone (PTRACE_SINGLESTEP, waitpid).
// Prints one line per variant with the microseconds per hit.
//   int3_cost [HITS]
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void with_int3(void) { __asm__ volatile("int3"); }
__attribute__((noinline)) void plain(void) { __asm__ volatile(""); }

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void fail(const char *what) {
  perror(what);
  exit(1);
}

// Waits for the child's next stop; returns the signal, or 0 when it exited.
static int wait_stop(pid_t child) {
  int status;
  if (waitpid(child, &status, 0) < 0)
    fail("waitpid");
  if (WIFEXITED(status) || WIFSIGNALED(status))
    return 0;
  return WSTOPSIG(status);
}

static pid_t spawn(void (*function)(void), long hits) {
  pid_t child = fork();
  if (child < 0)
    fail("fork");
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, 0, 0);
    raise(SIGSTOP);
    for (long i = 0; i < hits; i++)
      function();
    _exit(0);
  }
  if (wait_stop(child) != SIGSTOP)
    fail("child did not stop");
  return child;
}

static void report(const char *variant, long hits, double us) {
  printf("int3_cost: %-10s %ld hits in %.3f s: %.1f us per hit\n", variant, hits, us / 1e6,
         us / (double)hits);
}

static void trap_only(long hits) {
  pid_t child = spawn(with_int3, hits);
  double start = now_us();
  long seen = 0;
  if (ptrace(PTRACE_CONT, child, 0, 0) < 0)
    fail("PTRACE_CONT");
  while (wait_stop(child) == SIGTRAP) {
    seen++;
    if (ptrace(PTRACE_CONT, child, 0, 0) < 0)
      fail("PTRACE_CONT");
  }
  report("trap", seen, now_us() - start);
}

static void breakpoint_hits(long hits) {
  pid_t child = spawn(plain, hits);
  uintptr_t at = (uintptr_t)plain; // fork keeps the address space: the same address in the child
  errno = 0;
  long original = ptrace(PTRACE_PEEKTEXT, child, (void *)at, 0);
  long patched = (long)(((unsigned long)original & ~0xffUL) | 0xcc);
  if (ptrace(PTRACE_POKETEXT, child, (void *)at, (void *)patched) < 0)
    fail("PTRACE_POKETEXT");
  double start = now_us(), stepping = 0;
  long seen = 0;
  if (ptrace(PTRACE_CONT, child, 0, 0) < 0)
    fail("PTRACE_CONT");
  while (wait_stop(child) == SIGTRAP) {
    seen++;
    struct user_regs_struct regs;
    ptrace(PTRACE_GETREGS, child, 0, &regs);
    regs.rip -= 1; // the int3 executed: back onto the breakpoint's address
    ptrace(PTRACE_SETREGS, child, 0, &regs);
    ptrace(PTRACE_POKETEXT, child, (void *)at, (void *)original);
    double step = now_us();
    ptrace(PTRACE_SINGLESTEP, child, 0, 0);
    if (wait_stop(child) != SIGTRAP)
      fail("single-step");
    stepping += now_us() - step;
    ptrace(PTRACE_POKETEXT, child, (void *)at, (void *)patched);
    if (ptrace(PTRACE_CONT, child, 0, 0) < 0)
      fail("PTRACE_CONT");
  }
  report("breakpoint", seen, now_us() - start);
  report("step", seen, stepping);
}

int main(int argc, char **argv) {
  long hits = argc > 1 ? atol(argv[1]) : 20000;
  trap_only(hits);
  breakpoint_hits(hits);
  return 0;
}
