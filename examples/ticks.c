// A timer's signal handled while the program works: SIGALRM every 5 ms of wall-clock time, which
// debuggers pass to the program without stopping. Step traces go into the handler and back
// (tests/integration/test_step.py).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

volatile long ticks, total;

static void on_alarm(int signo) {
  (void)signo;
  ticks++;
}

__attribute__((noinline)) void spin(long rounds) {
  for (long i = 0; i < rounds; ++i)
    total += i;
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  struct itimerval every = {{0, 5000}, {0, 5000}};
  setitimer(ITIMER_REAL, &every, NULL);
  spin(argc > 1 ? atol(argv[1]) : 100000000);
  printf("ticks: %ld\n", ticks);
  return 0;
}
