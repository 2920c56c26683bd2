// The raw-ptrace baseline: what one sample costs with no debugger in the way. Seizes PID, then at
// HZ interrupts it, reads all registers and the caller (the word at the frame pointer + 8), and
// continues it, until the process exits. Prints the mean cost per sample in microseconds.
//   ptrace_sample PID HZ
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: ptrace_sample PID HZ\n");
    return 2;
  }
  pid_t pid = atoi(argv[1]);
  double period = 1.0 / atof(argv[2]);
  if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0) {
    perror("PTRACE_SEIZE");
    return 1;
  }
  unsigned long samples = 0;
  double busy = 0;
  for (;;) {
    struct timespec pause = {0, (long)(period * 1e9)};
    nanosleep(&pause, NULL);
    double begin = now();
    if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0)
      break;
    int status;
    if (waitpid(pid, &status, __WALL) != pid || WIFEXITED(status) || WIFSIGNALED(status))
      break;
    struct user_regs_struct regs;
    ptrace(PTRACE_GETREGS, pid, 0, &regs);
    errno = 0;
    long caller = ptrace(PTRACE_PEEKDATA, pid, (void *)(regs.rbp + 8), 0);
    (void)caller;
    // A signal-delivery stop must pass its signal on; a group/interrupt stop continues with none.
    int sig = WIFSTOPPED(status) && (status >> 16) == 0 ? WSTOPSIG(status) : 0;
    if (sig == SIGTRAP || sig == SIGSTOP)
      sig = 0;
    ptrace(PTRACE_CONT, pid, 0, (void *)(long)sig);
    busy += now() - begin;
    samples++;
  }
  printf("ptrace_sample: %lu samples, %.1f us per sample (interrupt + GETREGS + caller + cont)\n",
         samples, samples ? busy / samples * 1e6 : 0.0);
  return 0;
}
