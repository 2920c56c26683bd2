#include "capture/SignalTimer.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <random>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace strobe {

uint64_t monotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

SignalTimer::SignalTimer(Config config) : config_(config), thread_([this] { run(); }) {}

SignalTimer::~SignalTimer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::optional<uint64_t> SignalTimer::acknowledge() {
  std::lock_guard lock(mutex_);
  if (!inFlight_)
    return std::nullopt;
  inFlight_ = false;
  lastLatencyNs_ = monotonicNs() - sentAtNs_;
  wake_.notify_all();
  return lastLatencyNs_;
}

bool SignalTimer::inFlight() const {
  std::lock_guard lock(mutex_);
  return inFlight_;
}

bool SignalTimer::finalRequested() const {
  std::lock_guard lock(mutex_);
  return final_;
}

bool SignalTimer::targetGone() const {
  std::lock_guard lock(mutex_);
  return gone_;
}

uint64_t SignalTimer::signalsSent() const {
  std::lock_guard lock(mutex_);
  return sent_;
}

void SignalTimer::run() {
  std::mt19937_64 random(config_.pid ^ monotonicNs());
  std::uniform_real_distribution<double> spread(1.0 - config_.jitter, 1.0 + config_.jitter);
  const uint64_t start = monotonicNs();
  std::unique_lock lock(mutex_);
  while (!stop_ && !gone_ && !final_) {
    wake_.wait(lock, [this] { return stop_ || !inFlight_; });
    // Never ask for the next stop sooner than the last one took to arrive: the inferior then runs
    // at least half the time however slow stops are (many threads, a loaded machine), and the
    // debugger is never still resuming threads when the next signal lands.
    auto period = std::chrono::nanoseconds(
        std::max(static_cast<uint64_t>(static_cast<double>(config_.periodNs) * spread(random)),
                 lastLatencyNs_));
    if (wake_.wait_for(lock, period, [this] { return stop_; }))
      break;
    if (config_.durationNs && monotonicNs() - start >= *config_.durationNs)
      final_ = true;
    // To the main thread, which lives as long as the process: a process-directed signal may land
    // on a thread in the middle of exiting, whose stop GDB can lose (seen with 8 threads at 5 kHz).
    // Only a main thread that has already exited makes it fall back to a process-directed one.
    if (::syscall(SYS_tgkill, config_.pid, config_.pid, config_.signo) != 0 &&
        ::kill(config_.pid, config_.signo) != 0) {
      gone_ = errno == ESRCH;
      continue;
    }
    inFlight_ = true;
    ++sent_;
    sentAtNs_ = monotonicNs();
  }
}

} // namespace strobe
