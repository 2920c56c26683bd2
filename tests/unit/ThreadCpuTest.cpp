// On-CPU time from /proc, read through files kept open, against real threads of this process.
#include "capture/ThreadCpu.h"
#include "FakeTarget.h"
#include "capture/Sampler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>

namespace strobe {
namespace {

uint64_t thisThreadId() { return static_cast<uint64_t>(::gettid()); }

// Spins until this thread has run `span` on a CPU, by its own clock (clock_gettime, not /proc):
// a wall-clock span gave only 12 ms of CPU out of 30 when CI ran the tests two at a time.
void burnCpu(std::chrono::milliseconds span) {
  auto cpuNow = [] {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
  };
  const auto end = cpuNow() + span;
  volatile uint64_t x = 0;
  while (cpuNow() < end)
    x = x + 1;
}

// Waits until the thread is asleep in the kernel.
void waitUntilBlocked(uint64_t tid) {
  for (;;) {
    std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t name = line.rfind(')'); // the state follows the name, which may hold spaces
    if (name != std::string::npos && line.size() > name + 2 && line[name + 2] == 'S')
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A thread that spins or blocks until released; its tid is known once it runs, and one that
// blocks is constructed only once it has: it goes on running after it has told its tid, and
// under load (CI runs two tests at a time) the rest of that, over 30 us of CPU, had come after
// the sampler's first reading and made it count as having run.
class TestThread {
public:
  explicit TestThread(bool spin)
      : thread_([this, spin] {
          tid_.set_value(thisThreadId());
          while (spin && !release_) {
          }
          release_.wait(false); // blocked in the kernel, off CPU
        }),
        tid(tid_.get_future().get()) {
    if (!spin)
      waitUntilBlocked(tid);
  }
  ~TestThread() { join(); }
  void join() {
    release_ = true;
    release_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }

private:
  std::promise<uint64_t> tid_;
  std::atomic<bool> release_{false};
  std::thread thread_;

public:
  const uint64_t tid;
};

size_t openFiles() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                       std::filesystem::directory_iterator());
}

TEST(ThreadCpu, SchedstatsFirstFieldIsTheCpuTime) {
  EXPECT_EQ(schedstatCpuNs("8051234 120000 17\n"), 8051234u);
  EXPECT_FALSE(schedstatCpuNs(""));
  EXPECT_FALSE(schedstatCpuNs("garbage"));
}

TEST(ThreadCpu, KeptOpenFileReadsTheThreadsGrowingCpuTime) {
  ThreadProcFiles schedstats(getpid(), "schedstat");
  size_t before = openFiles();
  std::optional<uint64_t> first = schedstatCpuNs(schedstats.read(thisThreadId()));
  ASSERT_TRUE(first);
  EXPECT_EQ(openFiles(), before + 1);
  burnCpu(std::chrono::milliseconds(30));
  std::optional<uint64_t> second = schedstatCpuNs(schedstats.read(thisThreadId()));
  ASSERT_TRUE(second);
  EXPECT_GE(*second - *first, 20'000'000u); // 30 ms spent
  EXPECT_EQ(openFiles(), before + 1);       // read again through the same file
}

TEST(ThreadCpu, FileOfAThreadThatEndedReadsNothingAndCloses) {
  TestThread thread(/*spin=*/false);
  ThreadProcFiles schedstats(getpid(), "schedstat");
  size_t before = openFiles();
  EXPECT_FALSE(schedstats.read(thread.tid).empty());
  thread.join();
  // pthread_join returns as the thread clears its tid, a moment before the kernel releases it.
  for (int wait = 0; wait < 1000 && !schedstats.read(thread.tid).empty(); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(schedstats.read(thread.tid).empty());
  EXPECT_EQ(openFiles(), before);
  EXPECT_FALSE(threadCpuNs(getpid(), thread.tid));
}

TEST(ThreadCpu, ProcFileThatCannotOpenReadsEmpty) {
  ProcFile missing("/proc/self/no-such-file");
  EXPECT_TRUE(missing.read().empty());
}

TEST(ThreadCpu, StatFieldsAreCountedPastTheCommandName) {
  // The command name may hold spaces and parentheses; fields are numbered as in proc(5).
  const std::string_view stat = "4242 (a) b (c) t 1 4242 4242 0 -1 4194560 10 0 0 0 5 6 0 0 20 0 "
                                "3 0 1234\n";
  EXPECT_EQ(statField(stat, 3), "t");
  EXPECT_EQ(statField(stat, 4), "1");
  EXPECT_EQ(statField(stat, 20), "3");
  EXPECT_EQ(statField(stat, 22), "1234");
  EXPECT_EQ(statField(stat, 23), "");
  EXPECT_EQ(statField("no command name", 3), "");
  // This process's own stat: this test and the threads GoogleTest may have made.
  ProcFile self("/proc/self/stat");
  EXPECT_GE(leadingNumber<long>(statField(self.read(), 20)).value_or(0), 1);
}

TEST(ThreadCpu, SignalMasksAreReadFromTheirStatusLine) {
  const std::string_view status =
      "Name:\tblk\nShdPnd:\t4000000000000000\nSigBlk:\tfffffffe7ffbfeff\n"
      "SigIgn:\t0000000000000000\n";
  EXPECT_EQ(statusSignalMask(status, "ShdPnd:"), uint64_t{1} << 62); // signal 63
  EXPECT_EQ(statusSignalMask(status, "SigBlk:"), 0xfffffffe7ffbfeffu);
  EXPECT_EQ(statusSignalMask(status, "SigCgt:"), std::nullopt);
  EXPECT_EQ(statusSignalMask("SigBlk:\tzz\n", "SigBlk:"), std::nullopt);
  // This process holds nothing pending that every thread blocks.
  EXPECT_FALSE(signalBlockedEverywhere(getpid(), SIGRTMAX - 1));
}

TEST(ThreadCpu, EndedThreadsAreErasedWhateverTheListsOrder) {
  std::map<uint64_t, int> byTid{{5, 0}, {7, 1}, {9, 2}, {11, 3}, {40, 4}};
  const std::vector<uint64_t> living{40, 3, 9, 5}; // unsorted, and 3 has no entry yet
  eraseUnlisted(byTid, living);
  EXPECT_EQ(byTid, (std::map<uint64_t, int>{{5, 0}, {9, 2}, {40, 4}}));
  eraseUnlisted(byTid, {});
  EXPECT_TRUE(byTid.empty());
}

TEST(ThreadCpu, SamplerTellsTheSpinningThreadFromTheSleepingOne) {
  TestThread spinning(/*spin=*/true), sleeping(/*spin=*/false);
  testing::FakeTarget target;
  for (uint64_t tid : {spinning.tid, sleeping.tid}) {
    target.threadIds.push_back(tid);
    target.script[tid] = {0x1000};
  }
  Capture capture;
  capture.header.pid = getpid();
  Sampler sampler(target, capture, 1);
  for (int stop = 0; stop < 3; ++stop) {
    ASSERT_EQ(sampler.sampleAllThreads(stop), 2u);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(capture.samples.size(), 6u);
  for (size_t i = 2; i < 6; ++i) { // the first stop has no earlier reading to compare with
    const Sample &sample = capture.samples[i];
    EXPECT_EQ(sample.onCpu, sample.tid == spinning.tid) << "sample " << i;
  }
}

// A thread that burns `burst` of CPU each time it is woken, then blocks again.
class BurstThread {
public:
  explicit BurstThread(std::chrono::milliseconds burst)
      : thread_([this, burst] {
          tid_.set_value(thisThreadId());
          for (int seen = 0;; ++seen) {
            wakes_.wait(seen);
            if (quit_)
              return;
            burnCpu(burst);
          }
        }),
        tid(tid_.get_future().get()) {}
  ~BurstThread() {
    quit_ = true;
    wake();
    thread_.join();
  }
  void wake() {
    ++wakes_;
    wakes_.notify_all();
  }

private:
  std::promise<uint64_t> tid_;
  std::atomic<int> wakes_{0};
  std::atomic<bool> quit_{false};
  std::thread thread_;

public:
  const uint64_t tid;
};

TEST(ThreadCpu, AThreadInASystemCallMustHaveRunAShareOfTheTime) {
  // Two threads that each run 2 ms in every 60 ms, one sampled in user code, one in a system
  // call; and one that spins throughout a system call (a thread busy in the kernel).
  BurstThread user(std::chrono::milliseconds(2)), sleeper(std::chrono::milliseconds(2));
  TestThread kernelBusy(/*spin=*/true);
  testing::FakeTarget target;
  target.threadIds = {user.tid, sleeper.tid, kernelBusy.tid};
  for (uint64_t tid : target.threadIds)
    target.script[tid] = {0x1000};
  target.inSystemCall = {sleeper.tid, kernelBusy.tid};
  Capture capture;
  capture.header.pid = getpid();
  Sampler sampler(target, capture, 1);
  auto now = [] {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  };
  for (int stop = 0; stop < 4; ++stop) {
    ASSERT_EQ(sampler.sampleAllThreads(now()), 3u);
    user.wake();
    sleeper.wake();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  ASSERT_EQ(capture.samples.size(), 12u);
  for (size_t i = 3; i < 12; ++i) { // the first stop has no earlier reading to compare with
    const Sample &sample = capture.samples[i];
    EXPECT_EQ(sample.inSyscall, sample.tid != user.tid) << "sample " << i;
    EXPECT_EQ(sample.onCpu, sample.tid != sleeper.tid) << "sample " << i;
  }
}

TEST(ThreadCpu, SamplerClosesTheFilesOfThreadsNoLongerListed) {
  TestThread spinning(/*spin=*/true), sleeping(/*spin=*/false);
  testing::FakeTarget target;
  target.threadIds = {spinning.tid, sleeping.tid};
  for (uint64_t tid : target.threadIds)
    target.script[tid] = {0x1000};
  Capture capture;
  capture.header.pid = getpid();
  Sampler sampler(target, capture, 1);
  size_t before = openFiles();
  sampler.sampleAllThreads(0);
  EXPECT_EQ(openFiles(), before + 2); // one schedstat kept open per thread
  target.threadIds = {spinning.tid};  // the other one ended
  sampler.sampleAllThreads(1);
  EXPECT_EQ(openFiles(), before + 1);
}

} // namespace
} // namespace strobe
