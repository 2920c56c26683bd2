// The native thread that asks for sample stops: it sends the sample signal to the inferior at a
// jittered period, with at most one signal in flight, so a slow debugger is never flooded and a
// stop the user is sitting in does not pile signals up. It never touches the debugger.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

namespace strobe {

class SignalTimer {
public:
  struct Config {
    int pid = 0;
    int signo = 0;
    uint64_t periodNs = 0;
    double jitter = 0.1;                // each period is drawn from period * [1 - j, 1 + j]
    std::optional<uint64_t> durationNs; // after this, the signal in flight ends the capture
  };

  explicit SignalTimer(Config config);
  ~SignalTimer();
  SignalTimer(const SignalTimer &) = delete;
  SignalTimer &operator=(const SignalTimer &) = delete;

  // Called at the stop the signal in flight caused. Returns the latency from send to this call in
  // nanoseconds, or nullopt when no signal was in flight (a stray or late one).
  std::optional<uint64_t> acknowledge();
  bool inFlight() const;
  // The duration has elapsed: the stop for the signal in flight is the capture's last.
  bool finalRequested() const;
  // The inferior is gone (kill failed with ESRCH).
  bool targetGone() const;
  uint64_t signalsSent() const;

private:
  void run();

  Config config_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool inFlight_ = false;
  bool final_ = false;
  bool gone_ = false;
  uint64_t sent_ = 0;
  uint64_t sentAtNs_ = 0;
  uint64_t lastLatencyNs_ = 0; // send -> acknowledge of the previous signal
  std::thread thread_;
};

uint64_t monotonicNs();

} // namespace strobe
