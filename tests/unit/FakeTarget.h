// A scripted Target for engine tests: threads whose pcs follow a script, modules and symbols from
// tables, and a runUntilUserStop() that delivers the timer's real signals as stops to the session.
#pragma once

#include "command/RoutineSample.h"
#include "command/Session.h"
#include "target/Target.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <ctime>
#include <functional>
#include <map>
#include <semaphore.h>
#include <set>
#include <thread>
#include <unistd.h>

namespace strobe::testing {

// The sample signal is sent to this very process; post it instead of dying of it. A semaphore
// (sem_post is async-signal-safe) hands each signal over the moment it arrives: a polling delay
// would lengthen every stop, and the timer's --overhead pacing stretches the period by 7 times
// that.
struct SignalSemaphore {
  sem_t posted;
  SignalSemaphore() { sem_init(&posted, 0, 0); }
};
inline SignalSemaphore signalArrived;
inline std::atomic<pid_t> signalledThread{0}; // the thread the last signal stopped
inline void postSignal(int) {
  signalledThread = gettid();
  sem_post(&signalArrived.posted);
}

class FakeTarget : public Target {
public:
  struct Arm : Arming {
    FakeTarget &target;
    explicit Arm(FakeTarget &t) : target(t) { target.armed = true; }
    ~Arm() override { target.armed = false; }
    void keepSignalSilent() override { target.keptSilent = true; }
    bool stopsOneThread() const override { return target.oneThreadStops; }
  };

  FakeTarget() {
    struct sigaction action {};
    action.sa_handler = postSignal;
    sigaction(Session::sampleSignal(), &action, nullptr);
  }

  // Test-controlled state.
  bool process = true;
  bool running = false;
  bool armed = false;
  bool keptSilent = false;
  std::vector<uint64_t> threadIds{1001, 1002};
  // pc of each thread at the n-th read: script[tid][n % size]; caller is pc + 0x1000.
  std::map<uint64_t, std::vector<uint64_t>> script;
  std::map<uint64_t, size_t> reads;
  std::set<uint64_t> inSystemCall; // threads whose registers show a system call (read)
  std::vector<ModuleInfo> moduleTable{{"/bin/app", "abcd", 0x400000, 0x500000, 0}};
  std::map<uint64_t, SymbolInfo> symbolTable;      // by address; nearest lower entry wins
  std::map<uint64_t, std::vector<uint8_t>> memory; // readable blocks, by start address
  std::map<std::string, DataLocation, std::less<>> variables;
  // After this many sample stops runUntilUserStop() reports `stopAfter` instead (e.g. a
  // breakpoint).
  std::optional<size_t> userStopAfter;
  StopEvent userStop{StopEvent::Kind::Breakpoint, 1001, 0, 0, "breakpoint 1.1"};
  std::function<void()> beforeUserStop; // what happens to the process there (an exec, say)
  std::vector<Verdict> verdicts;
  std::chrono::microseconds readDelay{0}; // each readThread() takes this long (a slow debugger)
  std::string printed;
  size_t resumedInBackground = 0;

  bool hasProcess() override { return process; }
  Isa isa() override { return Isa::X86_64; }
  int pid() override { return getpid(); }
  bool isHostProcess() override { return true; }
  bool isEmulated() override { return false; }
  std::vector<uint64_t> threads() override {
    return routine.active() ? routine.threads() : threadIds;
  }
  bool readThread(uint64_t tid, unsigned depth, ThreadSnapshot &out) override {
    if (routine.active())
      return routine.readThread(tid, depth, out, *this);
    routine.noteDepth(depth);
    return readScripted(tid, depth, out);
  }
  // The stack of RoutineSample's walker: the scripted caller.
  bool walk(const std::vector<uint64_t> &regs, unsigned depth, std::vector<uint64_t> &stack) {
    ++rewalks;
    stack = scriptedStack(regs[registerTable(Isa::X86_64).pc], depth);
    return true;
  }
  static std::vector<uint64_t> scriptedStack(uint64_t pc, unsigned depth) {
    if (depth > 1)
      return {pc, pc + 0x1000};
    return {pc};
  }
  bool readScripted(uint64_t tid, unsigned depth, ThreadSnapshot &out) {
    std::this_thread::sleep_for(readDelay);
    auto it = script.find(tid);
    if (it == script.end() || it->second.empty())
      return false;
    uint64_t pc = it->second[reads[tid]++ % it->second.size()];
    out.tid = tid;
    out.regs.assign(registerTable(Isa::X86_64).regs.size(), 0);
    out.regs[registerTable(Isa::X86_64).pc] = pc;
    out.regs[20] = inSystemCall.count(tid) ? 0 : ~0ull; // orig_rax: read, or no system call
    out.stack = scriptedStack(pc, depth);
    return true;
  }
  std::vector<ModuleInfo> modules() override { return moduleTable; }
  SymbolInfo symbolize(uint64_t pc) override {
    symbolizedInRoutineSample += inRoutineSample;
    auto it = symbolTable.upper_bound(pc);
    if (it == symbolTable.begin())
      return {};
    return std::prev(it)->second;
  }
  std::vector<uint8_t> readMemory(uint64_t address, size_t size) override {
    auto block = memory.upper_bound(address);
    if (block == memory.begin())
      return {};
    --block;
    uint64_t offset = address - block->first;
    if (offset + size > block->second.size())
      return {};
    auto from = block->second.begin() + static_cast<std::ptrdiff_t>(offset);
    return {from, from + static_cast<std::ptrdiff_t>(size)};
  }
  uint64_t currentThread() override { return threadIds.empty() ? 0 : threadIds.front(); }
  bool readExtended(uint64_t, ExtendedSnapshot &) override { return false; }
  std::vector<uint64_t> resolve(std::string_view) override { return {}; }
  std::optional<DataLocation> dataAddress(std::string_view name) override {
    auto it = variables.find(name);
    return it == variables.end() ? std::nullopt : std::optional<DataLocation>(it->second);
  }
  StopEvent stepInstruction(uint64_t tid) override {
    return {StopEvent::Kind::Exited, tid, 0, 0, "the fake process has no code to step"};
  }
  StopEvent runTo(uint64_t tid, uint64_t) override {
    return {StopEvent::Kind::Exited, tid, 0, 0, "the fake process has no code to run"};
  }
  std::unique_ptr<Breakpoint> insertBreakpoint(uint64_t, BreakpointHandler) override {
    return nullptr;
  }
  std::unique_ptr<Arming> arm(Session &s, int) override {
    session = &s;
    while (sem_trywait(&signalArrived.posted) == 0) // a signal a previous capture left in flight
      ;
    return std::make_unique<Arm>(*this);
  }
  StopEvent runUntilUserStop() override {
    size_t stops = 0;
    for (;;) {
      if (userStopAfter && stops == *userStopAfter) {
        if (beforeUserStop)
          beforeUserStop();
        verdicts.push_back(session->onStop(userStop));
        return userStop;
      }
      timespec deadline{};
      clock_gettime(CLOCK_REALTIME, &deadline);
      deadline.tv_sec += 5;
      while (sem_timedwait(&signalArrived.posted, &deadline) != 0 && errno == EINTR)
        ;
      StopEvent event{StopEvent::Kind::Signal,
                      oneThreadStops ? static_cast<uint64_t>(signalledThread.load()) : 1001,
                      Session::sampleSignal(), 0, ""};
      if (routineStops) {
        inRoutineSample = true;
        // Through RoutineSample, as the front-ends do: thread 1001 read first, alone.
        bool taken = oneThreadRoutines
                         ? routine.depth() &&
                               readScripted(1001, routine.depth(), routine.snapshot()) &&
                               routine.offer(*session, event.signo)
                         : session->takeRoutineSample(event);
        inRoutineSample = false;
        if (taken) {
          ++routineSamples;
          ++stops;
          continue;
        }
      }
      Verdict v = session->onStop(event);
      verdicts.push_back(v);
      ++stops;
      if (v != Verdict::Resume)
        return event;
    }
  }
  void resumeInBackground() override {
    ++resumedInBackground;
    running = true;
  }
  bool isRunning() override { return running; }
  void print(std::string_view text) override { printed += text; }

  Session *session = nullptr;
  // Offers each sample stop to Session::takeRoutineSample() first, as the LLDB plugin does.
  bool routineStops = false;
  // ...through a RoutineSample of thread 1001 alone, as the front-ends do.
  bool oneThreadRoutines = false;
  // A sample stop halts the signalled thread alone (Arming::stopsOneThread()): the timer signals
  // this process's threads, and the stop is the thread's that took the signal.
  bool oneThreadStops = false;
  RoutineSample routine;
  size_t rewalks = 0;
  bool inRoutineSample = false;
  size_t routineSamples = 0;
  size_t symbolizedInRoutineSample = 0;
};

} // namespace strobe::testing
