#include "capture/SignalTimer.h"

#include "capture/ProcFile.h"
#include "target/QuietThread.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <pthread.h>
#include <random>
#include <signal.h>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace strobe {

uint64_t monotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

SignalTimer::SignalTimer(Config config)
    : config_(config), thread_(quietThread([this] { run(); })) {}

SignalTimer::~SignalTimer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::optional<uint64_t> SignalTimer::acknowledge(uint64_t tid) {
  std::lock_guard lock(mutex_);
  if (tid)
    parked_.erase(static_cast<int>(tid)); // the signal it blocked has come
  // The process's signal stops whichever thread the kernel chose.
  if (!inFlight_.erase(0) && !inFlight_.erase(static_cast<int>(tid)))
    return std::nullopt;
  ++stopped_;
  rounds_ += 1.0 / static_cast<double>(roundSize_);
  acknowledgedAtNs_ = monotonicNs();
  const uint64_t latency = acknowledgedAtNs_ - sentAtNs_;
  quickestLatencyNs_ = std::min(quickestLatencyNs_, latency);
  if (!std::exchange(blockedNow_, false))
    return latency;
  // The program held the signal, the debugger was not slow: pace by the stop alone.
  blockedNs_ += latency;
  sentAtNs_ = monotonicNs();
  return 0;
}

void SignalTimer::resumed() {
  std::lock_guard lock(mutex_);
  if (!stopped_)
    return;
  --stopped_;
  const uint64_t now = monotonicNs();
  // A stop of the process held every thread from the signal on. A stop of one thread held it
  // from its stop, which came at best as soon after the signal as the round's quickest: the
  // others waited for a core to take theirs, running or ready to, not stopped.
  roundStopNs_ =
      std::max(roundStopNs_,
               roundSize_ == 1 ? now - sentAtNs_ : now - acknowledgedAtNs_ + quickestLatencyNs_);
  if (inFlight_.empty() && !stopped_)
    endRound(now);
}

void SignalTimer::endRound(uint64_t now) {
  resumedAtNs_ = now;
  lastStopNs_ = roundStopNs_;
  wake_.notify_all();
}

bool SignalTimer::inFlight() const {
  std::lock_guard lock(mutex_);
  return !inFlight_.empty();
}

void SignalTimer::forgetDelivered() {
  std::lock_guard lock(mutex_);
  forgotInRound_ |= std::erase_if(inFlight_, [this](int tid) {
                      return tid && !threadSignalPending(config_.pid, tid, config_.signo);
                    }) != 0;
  if (inFlight_.empty() && !stopped_)
    endRound(monotonicNs());
}

bool SignalTimer::signalOutstanding() const {
  std::lock_guard lock(mutex_);
  return !inFlight_.empty() || !parked_.empty() || forgotInRound_;
}

double SignalTimer::rounds() const {
  std::lock_guard lock(mutex_);
  return rounds_;
}

bool SignalTimer::finalRequested() const {
  std::lock_guard lock(mutex_);
  return final_;
}

void SignalTimer::endSoon() {
  std::lock_guard lock(mutex_);
  hurry_ = true;
  wake_.notify_all();
}

uint64_t SignalTimer::blockedNs() const {
  std::lock_guard lock(mutex_);
  return blockedNs_ + (blockedNow_ ? monotonicNs() - sentAtNs_ : 0);
}

bool SignalTimer::blockedNow() const {
  std::lock_guard lock(mutex_);
  return blockedNow_;
}

bool SignalTimer::targetGone() const {
  std::lock_guard lock(mutex_);
  return gone_;
}

uint64_t SignalTimer::signalsSent() const {
  std::lock_guard lock(mutex_);
  return sent_;
}

namespace {

// How long a stop may last and still be one of strobe's own breakpoint stops, and how often the
// timer looks again meanwhile.
constexpr uint64_t kBriefHoldNs = 3'000'000;
constexpr uint64_t kHoldRecheckNs = 100'000;
// A stop costs the inferior more than strobe sees from signal to resumed(): the debugger's own
// resume after the engine returns, and caches refilled afterwards. Measured from a CPU-bound loop's
// progress: 20-30 % more in GDB, 30-100 % in LLDB, whose stops vary more (bench/RESULTS.md).
constexpr double kUnseenStopCost = 1.5;

// When a signal in flight counts as overdue, and how often the timer then looks whether the
// program blocks it. A stop of many threads in a slow debugger takes tens of milliseconds.
constexpr uint64_t kOverdueNs = 200'000'000;
// How often the timer looks whether the threads its signals went to have ended or block them: a
// short-lived thread's end must not stall the rounds for long.
constexpr uint64_t kThreadRecheckNs = 10'000'000;

// How long the inferior must run after a stop that strobe saw last `stopNs`.
uint64_t runAfterStop(uint64_t stopNs, double maxSlowdown) {
  return static_cast<uint64_t>(stopNs * kUnseenStopCost / maxSlowdown);
}

// A hold is counted in heldNs() from this long: a debugger slow to resume after a stop of many
// threads holds the inferior for milliseconds, every stop.
constexpr uint64_t kCountedHoldNs = 100'000'000;

uint64_t countedHold(uint64_t ns) { return ns >= kCountedHoldNs ? ns : 0; }

// The inferior is held stopped (by the user at a prompt, or mid-stop): a signal sent now would
// wait in the kernel, and a detach would then deliver it to a program it kills. `stat` is the
// process's /proc/PID/stat.
bool heldStopped(ProcFile &stat) {
  std::string_view state = statField(stat.read(), 3);
  return state == "t" || state == "T";
}

} // namespace

uint64_t SignalTimer::pacedPeriodNs() const {
  std::lock_guard lock(mutex_);
  return std::max(config_.periodNs, lastStopNs_ + runAfterStop(lastStopNs_, config_.maxSlowdown));
}

uint64_t SignalTimer::heldNs() const {
  std::lock_guard lock(mutex_);
  return heldNs_ + (holdStartNs_ ? countedHold(monotonicNs() - holdStartNs_) : 0);
}

uint64_t SignalTimer::unansweredNs() const {
  std::lock_guard lock(mutex_);
  return !inFlight_.empty() && !blockedNow_ ? monotonicNs() - sentAtNs_ : 0;
}

uint64_t SignalTimer::pacingHeldNs() const {
  std::lock_guard lock(mutex_);
  return pacingHeldNs_;
}

bool SignalTimer::send(ProcFile &stat) {
  std::vector<int> threads;
  if (config_.threadRounds && !singleThreaded(stat)) {
    threads = threadsOf(config_.pid);
    std::erase_if(parked_, [&threads](int tid) { return !std::ranges::count(threads, tid); });
    std::erase_if(threads, [this](int tid) { return parked_.count(tid) != 0; });
  }
  inFlight_.clear();
  // One thread left to signal: the process's signal reaches it as well, and one that every
  // thread blocks is then found as for a process.
  if (threads.size() <= 1) {
    if (::kill(config_.pid, config_.signo) != 0) {
      gone_ = errno == ESRCH;
      return false;
    }
    inFlight_.insert(0);
  }
  for (size_t i = 0; threads.size() > 1 && i < threads.size(); ++i)
    if (::syscall(SYS_tgkill, config_.pid, threads[i], config_.signo) == 0)
      inFlight_.insert(threads[i]); // else it ended since it was listed
  if (inFlight_.empty()) {
    gone_ = ::kill(config_.pid, 0) != 0 && errno == ESRCH;
    return false;
  }
  roundSize_ = inFlight_.size();
  sent_ += roundSize_;
  sentAtNs_ = monotonicNs();
  roundStopNs_ = 0;
  quickestLatencyNs_ = UINT64_MAX;
  forgotInRound_ = false;
  return true;
}

void SignalTimer::checkThreadsInFlight() {
  if (inFlight_.count(0) || monotonicNs() - sentAtNs_ < kThreadRecheckNs)
    return;
  std::erase_if(inFlight_, [this](int tid) {
    std::optional<bool> blocks = threadBlocksSignal(config_.pid, tid, config_.signo);
    if (blocks == true)
      parked_.insert(tid);
    return blocks != false; // else on its way: the scheduler or the debugger is slow
  });
  if (inFlight_.empty() && !stopped_)
    endRound(monotonicNs());
}

void SignalTimer::run() {
  std::mt19937_64 random(config_.pid ^ monotonicNs());
  std::uniform_real_distribution<double> spread(1.0 - config_.jitter, 1.0 + config_.jitter);
  const uint64_t start = monotonicNs();
  uint64_t due = start; // when the next signal is due: one period after the previous was sent
  ProcFile stat("/proc/" + std::to_string(config_.pid) + "/stat");
  std::unique_lock lock(mutex_);
  while (!stop_ && !gone_ && !final_) {
    auto readyToSend = [this] { return stop_ || (inFlight_.empty() && !stopped_); };
    auto recheck = [this] { return inFlight_.count(0) ? kOverdueNs : kThreadRecheckNs; };
    while (!wake_.wait_for(lock, std::chrono::nanoseconds(recheck()), readyToSend)) {
      checkThreadsInFlight();
      if (inFlight_.count(0) && !blockedNow_ && monotonicNs() - sentAtNs_ >= kOverdueNs)
        blockedNow_ = signalBlockedEverywhere(config_.pid, config_.signo);
    }
    // Periods run from send to send, so a cheap stop does not lower the rate; a slow one (many
    // threads, a slow debugger, a loaded machine) lowers it to keep the stops to their share.
    const uint64_t byPeriod = due + static_cast<uint64_t>(config_.periodNs * spread(random));
    const uint64_t byPacing = resumedAtNs_ + runAfterStop(lastStopNs_, config_.maxSlowdown);
    due = std::max(byPeriod, byPacing);
    pacingHeldNs_ += byPacing - std::min(byPacing, std::max(byPeriod, monotonicNs()));
    auto wait = std::chrono::nanoseconds(due - std::min(due, monotonicNs()));
    if (wake_.wait_for(lock, wait, [this] { return stop_ || hurry_; }) && stop_)
      break;
    // A breakpoint strobe handles (heap tracking, a loop marker) holds the process for well under
    // a millisecond: look again soon. Held for longer, the user has it: try one period later.
    bool held = heldStopped(stat);
    const uint64_t first = monotonicNs();
    while (held && monotonicNs() - first < kBriefHoldNs) {
      if (wake_.wait_for(lock, std::chrono::nanoseconds(kHoldRecheckNs), [this] { return stop_; }))
        return;
      held = heldStopped(stat);
    }
    if (held) {
      if (!holdStartNs_)
        holdStartNs_ = first;
      due = monotonicNs();
      continue;
    }
    if (holdStartNs_)
      heldNs_ += countedHold(monotonicNs() - std::exchange(holdStartNs_, 0));
    const bool last =
        hurry_ || (config_.durationNs && monotonicNs() - start >= *config_.durationNs);
    // No stop can come before final_ is set: acknowledge() waits for this lock.
    if (send(stat))
      final_ = last;
  }
}

} // namespace strobe
