// The raw-ptrace baseline: what one sample costs with no debugger in the way. Seizes every thread
// of PID, then at HZ interrupts them all, reads each one's registers and caller (the word above
// the frame pointer), and continues them, until the process exits. Prints the mean cost per
// sample (all threads) in microseconds, measured on the tracer's side.
//   ptrace_sample PID HZ
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int seize_all(pid_t pid, pid_t *tids) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR *dir = opendir(path);
  if (!dir)
    return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(dir)) && n < MAX_THREADS;) {
    pid_t tid = atoi(e->d_name);
    if (tid > 0 && ptrace(PTRACE_SEIZE, tid, 0, 0) == 0)
      tids[n++] = tid;
  }
  closedir(dir);
  return n;
}

static void on_alarm(int sig) { (void)sig; }

// Blocks until the interrupt stop arrives, at most 100 ms (SIGALRM interrupts waitpid): a thread
// that is exiting may never report one. Blocking, not polling, keeps the tracer's own latency out
// of what a stop costs.
static int wait_stopped(pid_t tid, int *status) {
  struct itimerval limit = {{0, 0}, {0, 100000}}, off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &limit, NULL);
  pid_t got = waitpid(tid, status, __WALL);
  setitimer(ITIMER_REAL, &off, NULL);
  return got == tid && WIFSTOPPED(*status);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: ptrace_sample PID HZ\n");
    return 2;
  }
  pid_t pid = atoi(argv[1]);
  double period = 1.0 / atof(argv[2]);
  // No SA_RESTART: the alarm must end a waitpid that would never return.
  struct sigaction alarm = {.sa_handler = on_alarm};
  sigaction(SIGALRM, &alarm, NULL);
  pid_t tids[MAX_THREADS];
  int threads = seize_all(pid, tids);
  if (threads == 0) {
    perror("PTRACE_SEIZE");
    return 1;
  }
  unsigned long samples = 0;
  double busy = 0;
  for (int alive = threads; alive > 0;) {
    struct timespec pause = {0, (long)(period * 1e9)};
    nanosleep(&pause, NULL);
    double begin = now();
    alive = 0;
    for (int i = 0; i < threads; i++)
      if (tids[i] && ptrace(PTRACE_INTERRUPT, tids[i], 0, 0) != 0)
        tids[i] = 0;
    for (int i = 0; i < threads; i++) {
      if (!tids[i])
        continue;
      int status;
      if (!wait_stopped(tids[i], &status)) {
        tids[i] = 0;
        continue;
      }
      struct user_regs_struct regs;
      ptrace(PTRACE_GETREGS, tids[i], 0, &regs);
      long caller = ptrace(PTRACE_PEEKDATA, tids[i], (void *)(regs.rbp + 8), 0);
      (void)caller;
      // A signal-delivery stop passes its signal on; an interrupt or group stop resumes with none.
      int sig = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
      if (sig == SIGTRAP || sig == SIGSTOP)
        sig = 0;
      ptrace(PTRACE_CONT, tids[i], 0, (void *)(long)sig);
      alive++;
    }
    if (alive == 0)
      break;
    busy += now() - begin;
    samples++;
  }
  printf("ptrace_sample: %lu samples of %d threads, %.1f us per sample\n", samples, threads,
         samples ? busy / samples * 1e6 : 0.0);
  return 0;
}
