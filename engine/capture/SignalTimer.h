// The native thread that asks for sample stops: it sends the sample signal to the inferior at a
// jittered period, with at most one signal in flight, so a slow debugger is never flooded and a
// stop the user is sitting in does not pile signals up; and never so soon after a stop that the
// stops take more than their share of the inferior's time. It never touches the debugger.
//
// The signal goes to the process, and its stop, which halts every thread, samples them all; or,
// where the front-end takes a stop of one thread while the others run on, to each thread of a
// process of several (a round: the signals go out together and count as one in flight until each
// has been answered), and each stop samples its own thread, as perf samples each on its own. A
// thread that is not running takes its signal when the scheduler next runs it, so on a machine
// with more busy threads than cores a signal waits milliseconds: one at a time, they would take
// the sum of those waits.
#pragma once

#include "capture/ProcFile.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
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
    // How much the sample stops may slow the inferior down: the most time stopped per time run
    // (0.05: 5 %). After a stop that lasted d, the next signal waits until the inferior has run
    // d / maxSlowdown.
    double maxSlowdown = 1.0;
    // Signal each thread of a process of several, in rounds (Arming::stopsOneThread()).
    bool threadRounds = false;
  };

  explicit SignalTimer(Config config);
  ~SignalTimer();
  SignalTimer(const SignalTimer &) = delete;
  SignalTimer &operator=(const SignalTimer &) = delete;

  // Called at the stop the signal in flight caused, of thread `tid` (0: unknown). Returns the
  // latency from send to this call in nanoseconds (0 when every thread blocked the signal
  // meanwhile: blockedNs() counts that wait), or nullopt when no signal was in flight for it (a
  // stray or late one).
  std::optional<uint64_t> acknowledge(uint64_t tid = 0);
  // The stop for the last acknowledged signal is over: its thread, or the inferior, runs again.
  // The next signal is timed from the last of these in a round, so it must follow every
  // acknowledge() whose stop resumes the inferior.
  void resumed();
  bool inFlight() const;
  // Called at a stop that halted every thread: the signals in flight to threads that none holds
  // pending any more were taken by that stop (a debugger that stops every thread reports one of
  // them and may drop the others) or will come as stray stops; the round no longer waits for
  // them.
  void forgetDelivered();
  // A signal sent may still come: the one in flight, one a thread blocks (taken out of the
  // rounds until it comes), or one of this round that forgetDelivered() gave up, which GDB may
  // have taken from its thread while stopping every thread and report after the resume.
  bool signalOutstanding() const;
  // The rounds the acknowledged stops covered: one per stop of the process, a thread's share of
  // its round per stop of one thread. Each sample stands for a round's time.
  double rounds() const;
  // The duration has elapsed: the stop for the signal in flight is the capture's last.
  bool finalRequested() const;
  // Ends the duration now: the next signal goes out without waiting for its period and is final.
  void endSoon();
  // The period the stops allow so far, signal to signal: the one asked for, or longer when the
  // stops are slow enough that maxSlowdown lowers the rate.
  uint64_t pacedPeriodNs() const;
  // How long maxSlowdown held signals back past the times their periods made them due, in all:
  // whether a rate below the one asked is the pacing's doing or the stops' own slowness.
  uint64_t pacingHeldNs() const;
  // How long sample signals waited, in all, because every thread of the program blocked them
  // (the signal in flight included): time in which no stop could be made. Its one signal in
  // flight shows it, so the timer looks only when a signal is long overdue.
  uint64_t blockedNs() const;
  // Whether the signal in flight waits now because every thread blocks it.
  bool blockedNow() const;
  // How long, in all, the timer found the inferior held stopped by someone else (the user, or a
  // debugger that has not resumed it yet), in holds of a tenth of a second or more.
  uint64_t heldNs() const;
  // How long the signal in flight has waited for its stop to be handled (not counting a signal
  // every thread blocks); 0 with none in flight.
  uint64_t unansweredNs() const;
  // The inferior is gone (kill failed with ESRCH).
  bool targetGone() const;
  uint64_t signalsSent() const;

private:
  void run();
  // Sends the next signal: to the process, or one to each thread it has (`stat`: its
  // /proc/PID/stat); false when none went.
  bool send(ProcFile &stat);
  // While signals to threads wait: gives up each that has waited a while and whose thread has
  // ended (the signal went with it) or blocks the signal (it comes once unblocked, and the
  // thread sits out the rounds meanwhile).
  void checkThreadsInFlight();
  // The round's last signal is answered and its last stop over.
  void endRound(uint64_t now);

  Config config_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool hurry_ = false; // endSoon() was called
  // The signals in flight: their threads, or 0 for the process. One round, sent at sentAtNs_.
  std::set<int> inFlight_;
  size_t roundSize_ = 1;
  unsigned stopped_ = 0; // stops acknowledged, not yet resumed
  bool final_ = false;
  bool gone_ = false;
  uint64_t sent_ = 0;
  uint64_t sentAtNs_ = 0;
  // What the previous round's stops held the inferior for: a stop of the process, from send to
  // resume; a round's, its longest stop of one thread (see resumed()).
  uint64_t lastStopNs_ = 0;
  uint64_t roundStopNs_ = 0;       // the same, for the round in flight so far
  uint64_t quickestLatencyNs_ = 0; // of the round's acknowledged stops
  uint64_t acknowledgedAtNs_ = 0;
  uint64_t resumedAtNs_ = 0;
  uint64_t pacingHeldNs_ = 0;
  bool blockedNow_ = false;  // the signal in flight was found blocked by every thread
  uint64_t blockedNs_ = 0;   // acknowledged signals' waits while blocked
  uint64_t heldNs_ = 0;      // ended holds by someone else
  uint64_t holdStartNs_ = 0; // when the hold going on began; 0 when none
  double rounds_ = 0;
  std::set<int> parked_;       // threads holding a signal they block
  bool forgotInRound_ = false; // forgetDelivered() gave up signals of the round last sent
  std::thread thread_;
};

uint64_t monotonicNs();

} // namespace strobe
