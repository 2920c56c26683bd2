// A thread of strobe's inside the debugger's process, started with every signal blocked: with any
// unblocked, the kernel could hand it a signal meant for the debugger, such as the SIGCHLD GDB
// waits for in sigsuspend, and the debugger would hang.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <thread>
#include <utility>

namespace strobe {

template <typename F> std::thread quietThread(F &&body) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  std::thread thread(std::forward<F>(body));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return thread;
}

} // namespace strobe
