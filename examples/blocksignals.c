// A program that blocks every signal in every thread for a while, as daemons that take their
// signals from a signalfd do: a signal sent to it waits until a thread unblocks it.
//   blocksignals SECONDS   two threads work in blocked_work for SECONDS with all signals blocked,
//                          then the main thread unblocks them and works in unblocked_work for 0.5 s
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void __attribute__((noinline)) spin(double seconds) {
  for (double end = now() + seconds; now() < end;)
    for (int i = 0; i < 10000; ++i)
      sink += (unsigned long)i;
}

static void __attribute__((noinline)) blocked_work(double seconds) { spin(seconds); }
static void __attribute__((noinline)) unblocked_work(double seconds) { spin(seconds); }

static void *helper(void *seconds) {
  blocked_work(*(double *)seconds);
  return NULL;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 2.0;
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL); // the helper thread inherits the mask
  pthread_t thread;
  pthread_create(&thread, NULL, helper, &seconds);
  blocked_work(seconds);
  pthread_join(thread, NULL);
  sigprocmask(SIG_UNBLOCK, &all, NULL);
  unblocked_work(0.5);
  puts("blocksignals: done");
  return 0;
}
