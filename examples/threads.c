// Multi-threaded fixture: N busy workers (default 8) for SECONDS, plus short-lived threads that
// start and exit while sampling runs, and one thread parked in a blocking read (wall-clock only).
#include "work.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds = 3.0;
static int park_pipe[2];

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// Counts its rounds into *arg: the work done in the time given shows what sampling slowed.
__attribute__((noinline)) static void *busy_worker(void *arg) {
  unsigned long rounds = 0; // a local: the workers' counters side by side would share a line
  double start = now();
  while (seconds <= 0 || now() - start < seconds) {
    work_units(10);
    ++rounds;
  }
  *(unsigned long *)arg = rounds;
  return NULL;
}

__attribute__((noinline)) static void *short_lived(void *arg) {
  (void)arg;
  work_units(200);
  return NULL;
}

__attribute__((noinline)) static void *parked(void *arg) {
  (void)arg;
  char c;
  ssize_t n = read(park_pipe[0], &c, 1);
  (void)n;
  return NULL;
}

int main(int argc, char **argv) {
  int workers = argc > 2 ? atoi(argv[2]) : 8;
  seconds = argc > 1 ? atof(argv[1]) : 3.0;
  if (pipe(park_pipe) != 0)
    return 1;
  pthread_t park, tids[64];
  unsigned long rounds[64] = {0};
  pthread_create(&park, NULL, parked, NULL);
  for (int i = 0; i < workers && i < 64; i++)
    pthread_create(&tids[i], NULL, busy_worker, &rounds[i]);
  double start = now();
  while (now() - start < seconds) {
    pthread_t t;
    pthread_create(&t, NULL, short_lived, NULL);
    pthread_join(t, NULL);
    usleep(20000);
  }
  unsigned long total = 0;
  for (int i = 0; i < workers && i < 64; i++) {
    pthread_join(tids[i], NULL);
    total += rounds[i];
  }
  if (write(park_pipe[1], "x", 1) != 1)
    return 1;
  pthread_join(park, NULL);
  printf("threads: done, %lu rounds of work\n", total);
  return 0;
}
