// What a debugger alone costs per stop: sends PID a real-time signal at HZ until the process is
// gone, for a debugger told to stop on it silently and resume without passing it. Real-time
// signals queue, so every one sent is one stop. Prints the number sent.
//   signal_sender PID HZ
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: signal_sender PID HZ\n");
    return 2;
  }
  pid_t pid = atoi(argv[1]);
  struct timespec period = {0, (long)(1e9 / atof(argv[2]))};
  unsigned long sent = 0;
  for (;; sent++) {
    nanosleep(&period, NULL);
    if (kill(pid, SIGRTMAX - 1) != 0)
      break;
  }
  fprintf(stderr, "signal_sender: %lu signals\n", sent);
  return 0;
}
