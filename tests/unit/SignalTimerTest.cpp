#include "capture/SignalTimer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace strobe;

namespace {

std::atomic<int> received{0};
void onSignal(int) { received++; }

struct SignalCatcher {
  int signo;
  struct sigaction previous {};
  explicit SignalCatcher(int s, void (*handler)(int) = onSignal) : signo(s) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigaction(signo, &action, &previous);
    received = 0;
  }
  ~SignalCatcher() { sigaction(signo, &previous, nullptr); }
};

void waitFor(const std::function<bool()> &done) {
  for (int i = 0; i < 400 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

} // namespace

TEST(SignalTimer, KeepsOneSignalInFlightUntilAcknowledged) {
  const int signo = SIGRTMAX - 1;
  SignalCatcher catcher(signo);
  SignalTimer timer({getpid(), signo, 1'000'000, 0.1, std::nullopt});
  waitFor([&] { return timer.inFlight(); });
  ASSERT_TRUE(timer.inFlight());
  // Without an acknowledgement nothing more is sent, however long we wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(timer.signalsSent(), 1u);
  EXPECT_TRUE(timer.acknowledge().has_value());
  EXPECT_FALSE(timer.acknowledge().has_value()); // a second stop for the same signal is stray
  // Nor while the acknowledged stop lasts.
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(timer.signalsSent(), 1u);
  timer.resumed();
  waitFor([&] { return timer.signalsSent() == 2; });
  EXPECT_EQ(timer.signalsSent(), 2u);
  waitFor([&] { return received.load() >= 2; });
  EXPECT_EQ(received.load(), 2);
}

TEST(SignalTimer, DurationMarksTheLastSignalFinal) {
  const int signo = SIGRTMAX - 1;
  SignalCatcher catcher(signo);
  SignalTimer timer({getpid(), signo, 2'000'000, 0.1, 20'000'000});
  while (!timer.finalRequested()) {
    waitFor([&] { return timer.inFlight(); });
    if (!timer.finalRequested()) {
      timer.acknowledge();
      timer.resumed();
    }
  }
  // 20 ms at 2 ms per period: about ten signals, never dozens (fewer on a loaded machine, where
  // this thread's acknowledgements come late).
  EXPECT_GE(timer.signalsSent(), 2u);
  EXPECT_LE(timer.signalsSent(), 12u);
  uint64_t sent = timer.signalsSent();
  timer.acknowledge();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(timer.signalsSent(), sent);
}

TEST(SignalTimer, EndSoonSendsTheFinalSignalWithoutWaitingForThePeriod) {
  const int signo = SIGRTMAX - 1;
  SignalCatcher catcher(signo);
  SignalTimer timer({getpid(), signo, 10'000'000'000, 0.1, 60'000'000'000}); // 10 s, 60 s
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(timer.signalsSent(), 0u);
  EXPECT_FALSE(timer.finalRequested());
  timer.endSoon();
  waitFor([&] { return timer.signalsSent() == 1; });
  EXPECT_EQ(timer.signalsSent(), 1u) << "the final signal waited for the 10 s period";
  EXPECT_TRUE(timer.finalRequested());
}

TEST(SignalTimer, NoticesTheTargetIsGone) {
  pid_t child = fork();
  if (child == 0)
    _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  SignalTimer timer({child, SIGRTMAX - 1, 1'000'000, 0.1, std::nullopt});
  waitFor([&] { return timer.targetGone(); });
  EXPECT_TRUE(timer.targetGone());
  EXPECT_EQ(timer.signalsSent(), 0u);
}

// A child that sleeps until killed; `blocking`: with `signo` blocked (sigprocmask), else caught.
pid_t sleepingChild(int signo, bool blocking) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  // Blocked before the fork, so no signal can come before the child is set up; the parent
  // unblocks it again at once.
  sigprocmask(SIG_BLOCK, &set, nullptr);
  pid_t child = fork();
  if (child == 0) {
    signal(signo, onSignal);
    if (!blocking)
      sigprocmask(SIG_UNBLOCK, &set, nullptr);
    for (;;)
      pause();
  }
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  return child;
}

void killChild(pid_t child) {
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
}

TEST(SignalTimer, ASignalEveryThreadBlocksIsCountedApartFromTheStopLatency) {
  const int signo = SIGRTMAX - 1;
  pid_t child = sleepingChild(signo, true);
  SignalTimer timer({child, signo, 1'000'000, 0.1, std::nullopt});
  waitFor([&] { return timer.blockedNow(); });
  EXPECT_TRUE(timer.blockedNow()) << "the signal waits in the child, which blocks it";
  const uint64_t waited = timer.blockedNs();
  EXPECT_GE(waited, 200'000'000u);    // found once overdue, counted from the send
  auto latency = timer.acknowledge(); // as if the program had unblocked it and stopped
  ASSERT_TRUE(latency.has_value());
  EXPECT_EQ(*latency, 0u) << "the blocked wait is not the debugger's stop latency";
  EXPECT_FALSE(timer.blockedNow());
  EXPECT_GE(timer.blockedNs(), waited);
  killChild(child);
}

TEST(SignalTimer, AnOverdueSignalTheProgramTookIsNotBlocked) {
  // Delivered at once (nobody acknowledges it, as when the debugger is slow with the stop).
  const int signo = SIGRTMAX - 1;
  pid_t child = sleepingChild(signo, false);
  SignalTimer timer({child, signo, 1'000'000, 0.1, std::nullopt});
  waitFor([&] { return timer.inFlight(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_TRUE(timer.inFlight());
  EXPECT_FALSE(timer.blockedNow());
  EXPECT_EQ(timer.blockedNs(), 0u);
  killChild(child);
}

TEST(SignalTimer, TimeTheProgramWaitsOnTheDebuggerIsCounted) {
  const int signo = SIGRTMAX - 1;
  pid_t child = sleepingChild(signo, false);
  kill(child, SIGSTOP); // held, as by a debugger that has not resumed it
  SignalTimer timer({child, signo, 1'000'000, 0.1, std::nullopt});
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(timer.signalsSent(), 0u) << "no signal for a held program";
  EXPECT_GE(timer.heldNs(), 250'000'000u);
  EXPECT_EQ(timer.unansweredNs(), 0u);
  kill(child, SIGCONT);
  waitFor([&] { return timer.inFlight(); });
  ASSERT_TRUE(timer.inFlight());
  const uint64_t held = timer.heldNs();
  EXPECT_GE(held, 250'000'000u) << "the hold that ended stays counted";
  // Delivered, and no stop acknowledges it: the wait of a debugger that does not handle it.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GE(timer.unansweredNs(), 90'000'000u);
  EXPECT_TRUE(timer.acknowledge().has_value());
  EXPECT_EQ(timer.unansweredNs(), 0u);
  EXPECT_EQ(timer.heldNs(), held);
  killChild(child);
}

// The next signal after a stop of d comes no sooner than d / slowdown after the resume.
void expectSlowdownKept(double slowdown, int stopMs, int quietMs) {
  const int signo = SIGRTMAX - 1;
  SignalCatcher catcher(signo);
  SignalTimer timer({getpid(), signo, 1'000'000, 0.1, std::nullopt, slowdown});
  waitFor([&] { return timer.inFlight(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(stopMs)); // a slow stop: many periods
  auto latency = timer.acknowledge();
  ASSERT_TRUE(latency.has_value());
  EXPECT_GE(*latency, stopMs * 1'000'000u);
  timer.resumed();
  std::this_thread::sleep_for(std::chrono::milliseconds(quietMs));
  EXPECT_EQ(timer.signalsSent(), 1u) << "the next signal came before the stop's share allowed";
  waitFor([&] { return timer.signalsSent() == 2; });
  EXPECT_EQ(timer.signalsSent(), 2u);
}

TEST(SignalTimer, SlowStopsAtMostDoubleTheRunTimeByDefault) {
  expectSlowdownKept(1.0, 40, 35); // at least 40 ms more
}

TEST(SignalTimer, SlowStopsSlowTheInferiorDownAtMostByTheirShare) {
  expectSlowdownKept(0.05, 4, 70); // at least 80 ms more, where the period is 1 ms
}

TEST(SignalTimer, PacedPeriodIsTheAskedOneUntilAStopIsSlow) {
  const int signo = SIGRTMAX - 1;
  SignalCatcher catcher(signo);
  SignalTimer timer({getpid(), signo, 1'000'000, 0.1, std::nullopt, 0.05});
  EXPECT_EQ(timer.pacedPeriodNs(), 1'000'000u);
  waitFor([&] { return timer.inFlight(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(4));
  ASSERT_TRUE(timer.acknowledge().has_value());
  timer.resumed();
  // A 4 ms stop then at least 4 ms x 1.5 / 5 % = 120 ms of run: a period of 124 ms or more.
  EXPECT_GE(timer.pacedPeriodNs(), 124'000'000u);
  EXPECT_LT(timer.pacedPeriodNs(), 1'000'000'000u);
}

namespace {

// Which threads of this process the sample signal reached, in the order it did.
std::atomic<int> reachedCount{0};
std::atomic<pid_t> reached[64];
void onThreadSignal(int) {
  int slot = reachedCount++;
  if (slot < 64)
    reached[slot] = gettid();
}

// Threads of this process that wait, the sample signal unblocked, until told to end.
struct WaitingThreads {
  std::atomic<bool> end{false};
  std::vector<std::thread> threads;
  std::atomic<int> started{0};
  explicit WaitingThreads(int n) {
    for (int i = 0; i < n; ++i)
      threads.emplace_back([this] {
        ++started;
        while (!end)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
      });
    waitFor([&] { return started == n; });
  }
  ~WaitingThreads() {
    end = true;
    for (std::thread &t : threads)
      t.join();
  }
};

// A timer signalling this process's threads in rounds: this thread, two waiting ones and the
// timer's own, which blocks every signal, so that the signal sent to it waits there for ever and
// the timer takes it out of the rounds. The first round's signals have reached the other three.
struct FirstRound {
  SignalCatcher catcher{SIGRTMAX - 1, onThreadSignal};
  WaitingThreads waiting{2};
  SignalTimer timer{{getpid(), SIGRTMAX - 1, 1'000'000, 0.1, std::nullopt, 1.0, true}};
  FirstRound() {
    waitFor([&] { return reachedCount >= 3; });
  }
};

} // namespace

TEST(SignalTimer, ThreadRoundsSignalEveryThreadAndWaitForEachStop) {
  reachedCount = 0;
  FirstRound round;
  SignalTimer &timer = round.timer;
  ASSERT_EQ(reachedCount.load(), 3);
  EXPECT_EQ(timer.signalsSent(), 4u) << "one signal to each of the four threads, at once";
  std::vector<pid_t> tids(reached, reached + 3);
  EXPECT_NE(std::find(tids.begin(), tids.end(), gettid()), tids.end());
  EXPECT_FALSE(timer.acknowledge(1).has_value()) << "no signal went to thread 1";
  EXPECT_TRUE(timer.inFlight());
  for (size_t i = 0; i < tids.size(); ++i) {
    ASSERT_TRUE(timer.acknowledge(static_cast<uint64_t>(tids[i])).has_value());
    EXPECT_FALSE(timer.acknowledge(static_cast<uint64_t>(tids[i])).has_value());
    timer.resumed();
  }
  // Still waiting for the timer's thread until it is found to block the signal.
  waitFor([&] { return timer.signalsSent() > 4; });
  EXPECT_EQ(timer.signalsSent(), 7u) << "the next round leaves the blocking thread out";
  EXPECT_DOUBLE_EQ(timer.rounds(), 0.75) << "three of a round of four answered";
  EXPECT_TRUE(timer.signalOutstanding()) << "the blocking thread holds a signal";
}

TEST(SignalTimer, ARoundNoLongerWaitsForSignalsAStopOfEveryThreadTook) {
  reachedCount = 0;
  FirstRound round;
  SignalTimer &timer = round.timer;
  ASSERT_EQ(reachedCount.load(), 3);
  // One stop answered; the other two signals were delivered with no stop answered for them, as
  // when LLDB's stop of every thread drops the sample signals of the threads it did not report.
  ASSERT_TRUE(timer.acknowledge(static_cast<uint64_t>(reached[0].load())).has_value());
  timer.resumed();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(timer.signalsSent(), 4u) << "the round still waits";
  timer.forgetDelivered();
  waitFor([&] { return timer.signalsSent() > 4; });
  EXPECT_GT(timer.signalsSent(), 4u);
}
