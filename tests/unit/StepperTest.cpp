// Stepper against a fake target that executes a three-instruction x86-64 loop itself:
//   0x1000  48 83 c0 01   add rax, 1
//   0x1004  48 89 03      mov [rbx], rax
//   0x1007  eb f7         jmp 0x1000
#include "capture/Stepper.h"
#include "FakeTarget.h"

#include <gtest/gtest.h>

using namespace strobe;

namespace {

constexpr unsigned kRax = 0, kRbx = 1, kRip = 16, kEflags = 17, kOrigRax = 20;

// A thread whose registers and memory a test machine's stepInstruction() changes.
class Machine : public strobe::testing::FakeTarget {
public:
  std::vector<uint64_t> regs = std::vector<uint64_t>(21, 0);
  std::map<uint64_t, uint8_t> memory;

  Machine() { regs[kOrigRax] = ~0ull; } // not in a system call
  bool readThread(uint64_t tid, unsigned, ThreadSnapshot &out) override {
    out.tid = tid;
    out.regs = regs;
    out.stack = {regs[kRip]};
    return true;
  }
  std::vector<uint8_t> readMemory(uint64_t addr, size_t size) override {
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < size && memory.count(addr + i); ++i)
      bytes.push_back(memory[addr + i]);
    return bytes;
  }
};

class LoopMachine : public Machine {
public:
  std::optional<size_t> signalAtStep;    // the n-th step reports a signal instead
  std::optional<size_t> interruptAtStep; // the n-th step throws Interrupted (Ctrl-C) instead
  std::optional<uint64_t> watched;       // a store here stops the step after it, as a watchpoint
  // The n-th step delivers a signal instead: the thread is moved to the handler at 0x2000
  // (`jmp 0x1000`) without running its instruction. With deliveringFirst, that step reports the
  // signal as about to be delivered first, and the next one delivers it.
  std::optional<size_t> signalHandledAtStep;
  bool deliveringFirst = false;
  size_t steps = 0;
  size_t stepsAsked = 0;
  // beginStepping(): the thread and the stops asked for, whether its scope is alive, the steps
  // made inside it, after how many of them the scope heard that the next is the last, and the
  // rip at which it lets the Stepper stop of its own accord (any, if none).
  std::optional<uint64_t> steppingTid;
  std::set<uint64_t> steppingUntil;
  bool steppingScopeAlive = false;
  size_t stepsInScope = 0;
  std::vector<size_t> lastStepHeardAfter;
  std::optional<uint64_t> mayStopAt;

  std::unique_ptr<SteppingScope> beginStepping(uint64_t tid,
                                               const std::set<uint64_t> &until) override {
    struct Scope : SteppingScope {
      explicit Scope(LoopMachine &machine) : machine(machine) { machine.steppingScopeAlive = true; }
      ~Scope() override { machine.steppingScopeAlive = false; }
      void lastStepNext() override { machine.lastStepHeardAfter.push_back(machine.stepsInScope); }
      bool mayStopHere() const override {
        return !machine.mayStopAt || machine.regs[kRip] == *machine.mayStopAt;
      }
      LoopMachine &machine;
    };
    steppingTid = tid;
    steppingUntil = until;
    return std::make_unique<Scope>(*this);
  }

  LoopMachine() {
    const uint8_t code[] = {0x48, 0x83, 0xc0, 0x01, 0x48, 0x89, 0x03, 0xeb, 0xf7};
    for (size_t i = 0; i < sizeof code; ++i)
      memory[0x1000 + i] = code[i];
    const uint8_t handler[] = {0xe9, 0xfb, 0xef, 0xff, 0xff};
    for (size_t i = 0; i < sizeof handler; ++i)
      memory[0x2000 + i] = handler[i];
    regs[kRip] = 0x1000;
    regs[kRbx] = 0x8000;
    regs[kEflags] = 0x202 | 0x100; // TF, as a debugger's single-step leaves it
  }
  // Only `*ADDRESS`, as every front-end reads it.
  std::vector<uint64_t> resolve(std::string_view location) override {
    return {std::stoull(std::string(location.substr(1)), nullptr, 0)};
  }
  StopEvent stepInstruction(uint64_t tid) override {
    stepsInScope += steppingScopeAlive;
    if (interruptAtStep && stepsAsked++ == *interruptAtStep)
      throw Interrupted();
    if (signalAtStep && steps++ == *signalAtStep)
      return {StopEvent::Kind::Signal, tid, 11, 0, "signal SIGSEGV"};
    if (signalHandledAtStep && stepsAsked++ == *signalHandledAtStep) {
      if (std::exchange(deliveringFirst, false)) {
        signalHandledAtStep = stepsAsked; // the next step delivers it
        return {StopEvent::Kind::Delivering, tid, 14, 0, "signal SIGALRM"};
      }
      regs[kRip] = 0x2000;
      regs[kRax] = 14; // the handler's argument, as a delivery changes registers
      return {StopEvent::Kind::Step, tid, 0, 0, ""};
    }
    switch (regs[kRip]) {
    case 0x1000:
      regs[kRax] += 1;
      regs[kRip] = 0x1004;
      break;
    case 0x1004:
      for (int i = 0; i < 8; ++i)
        memory[regs[kRbx] + i] = static_cast<uint8_t>(regs[kRax] >> (8 * i));
      regs[kRip] = 0x1007;
      if (watched == regs[kRbx])
        return {StopEvent::Kind::Other, tid, 0, 0, "watchpoint 1"};
      break;
    default:
      regs[kRip] = 0x1000;
    }
    return {StopEvent::Kind::Step, tid, 0, 0, ""};
  }
};

} // namespace

TEST(Stepper, RecordsEachInstructionWithItsBytesAndRegistersAfterIt) {
  LoopMachine machine;
  Stepper stepper(machine);
  StepOutcome out = stepper.run({1001, 6, {}, false, {}});
  ASSERT_EQ(out.trace.size(), 7u); // the starting state, then one per instruction
  EXPECT_FALSE(out.userStop);
  EXPECT_EQ(out.endReason, "the count was reached");
  const std::vector<TraceRecord> records = out.trace.records();
  EXPECT_TRUE(records[0].instruction.empty());
  EXPECT_EQ(records[1].instruction, (std::vector<uint8_t>{0x48, 0x83, 0xc0, 0x01}));
  EXPECT_EQ(records[1].regs[kRax], 1u);
  EXPECT_EQ(records[1].regs[kRip], 0x1004u);
  EXPECT_EQ(records[3].instruction, (std::vector<uint8_t>{0xeb, 0xf7}));
  EXPECT_EQ(records[4].regs[kRax], 2u);
  // The trap flag is the stepping mechanism's, not the program's.
  EXPECT_EQ(records[2].regs[kEflags], 0x202u);
  EXPECT_TRUE(records[2].memory.empty());
}

// A step that leaves the thread where its instruction cannot go (a signal handler) is no
// instruction of the trace: its record holds the state there, as after a gap, and the handler's
// instructions follow.
TEST(Stepper, AStepThatLandsWhereItsInstructionCannotGoIsRecordedAsAGap) {
  for (const bool deliveringFirst : {false, true}) {
    SCOPED_TRACE(deliveringFirst);
    LoopMachine machine;
    machine.signalHandledAtStep = 1; // the step of `mov [rbx], rax`
    machine.deliveringFirst = deliveringFirst;
    Stepper stepper(machine);
    StepOutcome out = stepper.run({1001, 3, {}, true, {}});
    EXPECT_EQ(out.moves, 1u);
    EXPECT_EQ(out.endReason, "the count was reached");
    const std::vector<TraceRecord> records = out.trace.records();
    ASSERT_EQ(records.size(), 5u); // the start, 3 instructions and the move, which counts none
    EXPECT_FALSE(records[1].gap);
    EXPECT_TRUE(records[2].gap);
    EXPECT_TRUE(records[2].instruction.empty());
    EXPECT_TRUE(records[2].memory.empty()) << "the store never ran";
    EXPECT_EQ(records[2].regs[kRip], 0x2000u);
    EXPECT_EQ(records[2].regs[kRax], 14u);
    EXPECT_EQ(records[3].instruction, (std::vector<uint8_t>{0xe9, 0xfb, 0xef, 0xff, 0xff}));
    EXPECT_EQ(records[3].regs[kRip], 0x1000u);
    EXPECT_FALSE(records[3].gap);
    EXPECT_EQ(machine.memory.count(0x8000), 0u) << "nothing stored";
  }
}

TEST(Stepper, MemoryOperandsCarryTheValuesWrittenAtTheAddressComputedBeforehand) {
  LoopMachine machine;
  Stepper stepper(machine);
  StepOutcome out = stepper.run({1001, 3, {}, true, {}});
  ASSERT_EQ(out.trace.size(), 4u);
  const std::vector<TraceRecord> records = out.trace.records();
  EXPECT_TRUE(records[1].memory.empty()); // add rax, 1 touches no memory
  ASSERT_EQ(records[2].memory.size(), 1u);
  const MemoryAccess &store = records[2].memory[0];
  EXPECT_EQ(store.address, 0x8000u);
  EXPECT_EQ(store.size, 8u);
  EXPECT_TRUE(store.write);
  EXPECT_FALSE(store.read);
  EXPECT_EQ(store.writtenValue, (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0, 0}));
}

namespace {

// `rep movsb` (f3 a4) at 0x1000 copying 3 bytes from 0x8000 to 0x9000, then `jmp $` (eb fe).
// Each step runs one iteration, as the trap flag makes a CPU do; the pc moves on with the last.
class RepMoveMachine : public Machine {
public:
  static constexpr unsigned kRcx = 2, kRsi = 4, kRdi = 5;

  RepMoveMachine() {
    memory = {{0x1000, 0xf3}, {0x1001, 0xa4}, {0x1002, 0xeb}, {0x1003, 0xfe},
              {0x8000, 0x11}, {0x8001, 0x22}, {0x8002, 0x33}};
    regs[kRip] = 0x1000;
    regs[kRcx] = 3;
    regs[kRsi] = 0x8000;
    regs[kRdi] = 0x9000;
  }
  bool whole = false; // a step runs every iteration, as LLDB's own step of one does

  StopEvent stepInstruction(uint64_t tid) override {
    while (regs[kRip] == 0x1000 && regs[kRcx] != 0) {
      memory[regs[kRdi]++] = memory[regs[kRsi]++];
      if (--regs[kRcx] == 0)
        regs[kRip] = 0x1002;
      if (!whole)
        break;
    }
    return {StopEvent::Kind::Step, tid, 0, 0, ""};
  }
};

} // namespace

// A rep string instruction's step records the one element it moved: read and written, at the
// addresses its registers held before the step.
TEST(Stepper, EachStepOfARepStringInstructionRecordsItsIteration) {
  RepMoveMachine machine;
  Stepper stepper(machine);
  StepOutcome out = stepper.run({1001, 4, {}, true, {}});
  EXPECT_EQ(out.unpredictedMemory, 0u);
  const std::vector<TraceRecord> records = out.trace.records();
  ASSERT_EQ(records.size(), 5u);
  for (uint64_t k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    const TraceRecord &r = records[k + 1];
    ASSERT_EQ(r.memory.size(), 2u);
    const uint8_t moved = static_cast<uint8_t>(0x11 * (k + 1));
    for (const MemoryAccess &a : r.memory) {
      EXPECT_EQ(a.size, 1u);
      EXPECT_NE(a.read, a.write);
      if (a.read) {
        EXPECT_EQ(a.address, 0x8000 + k);
        EXPECT_EQ(a.readValue, std::vector<uint8_t>{moved});
      } else {
        EXPECT_EQ(a.address, 0x9000 + k);
        EXPECT_EQ(a.writtenValue, std::vector<uint8_t>{moved});
      }
    }
  }
  EXPECT_TRUE(records[4].memory.empty()); // jmp $
}

// A step that ran the instruction whole moved three elements: the one read beforehand is not
// its memory, which the trace then leaves out (and counts).
TEST(Stepper, ARepStringInstructionSteppedWholeRecordsNoMemory) {
  RepMoveMachine machine;
  machine.whole = true;
  StepOutcome out = Stepper(machine).run({1001, 2, {}, true, {}});
  EXPECT_EQ(out.unpredictedMemory, 1u);
  const std::vector<TraceRecord> records = out.trace.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].regs[RepMoveMachine::kRcx], 0u);
  EXPECT_TRUE(records[1].memory.empty());
}

// Two system calls and a jump back: getpid (39) at 0x1000, whose step leaves `secondCall` in
// rax, then that call at 0x1002, which this machine returns from; `jmp 0x1000` at 0x1004.
class SystemCallMachine : public Machine {
public:
  explicit SystemCallMachine(uint64_t secondCall) : secondCall_(secondCall) {
    const uint8_t code[] = {0x0f, 0x05, 0x0f, 0x05, 0xeb, 0xfa};
    for (size_t i = 0; i < sizeof code; ++i)
      memory[0x1000 + i] = code[i];
    regs[kRip] = 0x1000;
    regs[kRax] = 39;
  }
  StopEvent stepInstruction(uint64_t tid) override {
    regs[kRax] = regs[kRip] == 0x1000 ? secondCall_ : 39;
    regs[kRip] = regs[kRip] == 0x1004 ? 0x1000 : regs[kRip] + 2;
    return {StopEvent::Kind::Step, tid, 0, 0, ""};
  }
  std::unique_ptr<SteppingScope> beginStepping(uint64_t, const std::set<uint64_t> &) override {
    struct Scope : SteppingScope {
      explicit Scope(SystemCallMachine &machine) : machine(machine) {}
      void execMayFollow() override { machine.execHeardAt.push_back(machine.regs[kRip]); }
      SystemCallMachine &machine;
    };
    return std::make_unique<Scope>(*this);
  }

  std::vector<uint64_t> execHeardAt; // the pcs of the steps the scope heard might exec

private:
  uint64_t secondCall_;
};

// The recorded pcs go to be named before an exec, whose program takes over their addresses, and
// before a munmap, which may take a library's names with it, and at the end; not before other
// system calls (under LLDB naming ends a run of steps).
TEST(Stepper, RecordedPcsAreHandedOverBeforeCodeCanGoAndAtTheEnd) {
  using Handed = std::vector<std::vector<uint64_t>>;
  for (const auto &[call, expected] : {std::pair{uint64_t{59}, Handed{{0x1000, 0x1002}, {0x1004}}},
                                       std::pair{uint64_t{11}, Handed{{0x1000, 0x1002}, {0x1004}}},
                                       std::pair{uint64_t{39}, Handed{{0x1000, 0x1002, 0x1004}}}}) {
    SystemCallMachine machine(call);
    Handed handed;
    StepRequest request{1001, 3, {}, false, {}};
    request.recordedPcs = [&](std::span<const uint64_t> pcs) {
      handed.emplace_back(pcs.begin(), pcs.end());
    };
    Stepper(machine).run(request);
    EXPECT_EQ(handed, expected) << "system call " << call;
  }
}

// The scope hears of a step that may exec before it is made, and of no other.
TEST(Stepper, TheSteppingScopeHearsOfAnExecBeforeItsStep) {
  for (const auto &[call, heard] : {std::pair{uint64_t{59}, std::vector<uint64_t>{0x1002, 0x1002}},
                                    std::pair{uint64_t{322}, std::vector<uint64_t>{0x1002, 0x1002}},
                                    std::pair{uint64_t{11}, std::vector<uint64_t>{}},
                                    std::pair{uint64_t{39}, std::vector<uint64_t>{}}}) {
    SystemCallMachine machine(call);
    Stepper(machine).run({1001, 6, {}, false, {}});
    EXPECT_EQ(machine.execHeardAt, heard) << "system call " << call;
  }
}

// A loop that never leaves the vDSO is told of once, after kVdsoPatience steps there; one that
// passes through it is not.
TEST(Stepper, ALoopThatStaysInsideTheVdsoIsToldOfOnce) {
  for (const auto &[vdso, told] : {std::pair{std::pair<uint64_t, uint64_t>{0x1000, 0x2000}, 1},
                                   std::pair{std::pair<uint64_t, uint64_t>{0x1004, 0x2000}, 0}}) {
    LoopMachine machine;
    StepRequest request{1001, 2 * kVdsoPatience + 10, {}, false, {}};
    request.vdso = vdso;
    int calls = 0;
    request.stuckInVdso = [&calls](bool runOut) {
      ++calls;
      EXPECT_FALSE(runOut); // the trace began inside: no call's return to run to
    };
    const StepOutcome out = Stepper(machine).run(request);
    EXPECT_EQ(calls, told) << std::hex << vdso.first;
    EXPECT_EQ(out.runsOut, 0u);
    EXPECT_TRUE(out.countReached);
  }
}

namespace {

// A clock read that never ends under single steps: `call 0x7000` at 0x1000, `jmp 0x1000` at
// 0x1005, and in the vDSO at 0x7000 `jmp 0x7000`. Run to its return, it returns 42.
class StuckClockMachine : public Machine {
public:
  static constexpr unsigned kRsp = 7;
  std::vector<std::pair<uint64_t, uint64_t>> runs; // (tid, address) of each runTo()
  std::optional<StopEvent> runStop;                // what a run ends with instead of arriving
  bool runEndsShort = false;                       // a run reports a plain end, elsewhere
  std::vector<uint64_t> unwound;                   // the debugger's unwinding: stack[1...]

  StuckClockMachine() {
    const uint8_t code[] = {0xe8, 0xfb, 0x5f, 0x00, 0x00, 0xeb, 0xf9};
    for (size_t i = 0; i < sizeof code; ++i)
      memory[0x1000 + i] = code[i];
    memory[0x7000] = 0xeb;
    memory[0x7001] = 0xfe;
    regs[kRip] = 0x1000;
    regs[kRsp] = 0x9000;
  }
  bool readThread(uint64_t tid, unsigned depth, ThreadSnapshot &out) override {
    Machine::readThread(tid, depth, out);
    for (size_t k = 0; k < unwound.size() && out.stack.size() < depth; ++k)
      out.stack.push_back(unwound[k]);
    return true;
  }
  StopEvent stepInstruction(uint64_t tid) override {
    if (regs[kRip] == 0x1000) {
      regs[kRsp] -= 8;
      for (int i = 0; i < 8; ++i)
        memory[regs[kRsp] + i] = static_cast<uint8_t>(0x1005 >> (8 * i));
      regs[kRip] = 0x7000;
    } else if (regs[kRip] == 0x1005) {
      regs[kRip] = 0x1000;
    }
    return {StopEvent::Kind::Step, tid, 0, 0, ""};
  }
  StopEvent runTo(uint64_t tid, uint64_t address) override {
    runs.emplace_back(tid, address);
    regs[kRax] = 42;
    if (runStop)
      return *runStop;
    regs[kRip] = runEndsShort ? 0x7001 : address;
    regs[kRsp] += 8;
    return {StopEvent::Kind::Step, tid, 0, 0, ""};
  }
};

StepRequest stuckClockRequest(uint64_t count, int &told, bool runOut = true) {
  StepRequest request{1001, count, {}, false, {}};
  request.vdso = {0x7000, 0x8000};
  request.stuckInVdso = [&told, runOut](bool willRunOut) {
    ++told;
    EXPECT_EQ(willRunOut, runOut);
  };
  return request;
}

} // namespace

// After kVdsoPatience steps inside the vDSO, each call stuck there is run to the return address
// its call pushed, and the state there is a record as after a gap, of no instruction. The user
// is told once.
TEST(Stepper, ACallStuckInsideTheVdsoIsRunToItsReturnAsAGap) {
  StuckClockMachine machine;
  int told = 0;
  const StepOutcome out = Stepper(machine).run(stuckClockRequest(2 * kVdsoPatience + 2, told));
  EXPECT_EQ(told, 1);
  EXPECT_EQ(machine.runs, (std::vector<std::pair<uint64_t, uint64_t>>(2, {1001, 0x1005})));
  EXPECT_EQ(out.runsOut, 2u);
  EXPECT_TRUE(out.countReached);
  const std::vector<TraceRecord> records = out.trace.records();
  // the start; the call, kVdsoPatience - 1 jumps in place, the run's record; the jump back; again
  ASSERT_EQ(records.size(), 1 + 2 * (kVdsoPatience + 2));
  for (size_t at : {kVdsoPatience + 1, 2 * kVdsoPatience + 3}) {
    SCOPED_TRACE(at);
    EXPECT_EQ(records[at - 1].regs[kRip], 0x7000u);
    EXPECT_EQ(records[at - 1].instruction, (std::vector<uint8_t>{0xeb, 0xfe}));
    EXPECT_TRUE(records[at].gap);
    EXPECT_TRUE(records[at].instruction.empty());
    EXPECT_EQ(records[at].regs[kRip], 0x1005u);
    EXPECT_EQ(records[at].regs[kRax], 42u);
    EXPECT_FALSE(records[at + 1].gap);
    EXPECT_EQ(records[at + 1].instruction, (std::vector<uint8_t>{0xeb, 0xf9}));
  }
}

// A trace that begins inside the vDSO runs out to the first return address out of it that the
// debugger's unwinding gives, where a call instruction ends; it takes no other.
TEST(Stepper, ATraceThatBeginsInsideTheVdsoRunsOutWhereTheUnwindingSaysACallReturns) {
  using Stack = std::vector<uint64_t>;
  for (const auto &[unwound, runs] :
       {std::pair{Stack{0x1005}, size_t{1}}, std::pair{Stack{0x7010, 0x1005}, size_t{1}},
        std::pair{Stack{0x1007}, size_t{0}}, std::pair{Stack{0x7010}, size_t{0}}}) {
    SCOPED_TRACE(::testing::PrintToString(unwound));
    StuckClockMachine machine;
    machine.regs[kRip] = 0x7000;
    machine.unwound = unwound;
    int told = 0;
    const StepOutcome out =
        Stepper(machine).run(stuckClockRequest(kVdsoPatience + 5, told, runs != 0));
    EXPECT_EQ(told, 1);
    EXPECT_EQ(machine.runs, (std::vector<std::pair<uint64_t, uint64_t>>(runs, {1001, 0x1005})));
    EXPECT_EQ(out.runsOut, runs);
  }
}

// A run the front-end reports as ended, but short of the return address, is a stop of the
// user's: the trace ends there, with the state there.
TEST(Stepper, ARunOutOfTheVdsoThatEndsShortEndsTheTraceThere) {
  StuckClockMachine machine;
  machine.runEndsShort = true;
  int told = 0;
  const StepOutcome out = Stepper(machine).run(stuckClockRequest(5 * kVdsoPatience, told));
  ASSERT_TRUE(out.userStop);
  EXPECT_EQ(out.userStop->kind, StopEvent::Kind::Other);
  EXPECT_EQ(out.endReason, "the thread stopped short of where it ran to");
  EXPECT_EQ(out.runsOut, 1u);
  const std::vector<TraceRecord> records = out.trace.records();
  ASSERT_EQ(records.size(), 1 + kVdsoPatience + 1);
  EXPECT_TRUE(records.back().gap);
  EXPECT_EQ(records.back().regs[kRip], 0x7001u);
}

// A run that stops elsewhere (a signal that stops, an exit) ends the trace with that stop, the
// user's; the state it stopped in, where there is one, is the last record.
TEST(Stepper, ARunOutOfTheVdsoThatStopsElsewhereEndsTheTraceForTheUser) {
  for (const StopEvent::Kind kind : {StopEvent::Kind::Signal, StopEvent::Kind::Exited}) {
    StuckClockMachine machine;
    machine.runStop = StopEvent{kind, 1001, 11, 0, "signal SIGSEGV"};
    int told = 0;
    const StepOutcome out = Stepper(machine).run(stuckClockRequest(5 * kVdsoPatience, told));
    ASSERT_TRUE(out.userStop);
    EXPECT_EQ(out.userStop->kind, kind);
    EXPECT_EQ(out.endReason, "signal SIGSEGV");
    const std::vector<TraceRecord> records = out.trace.records();
    const bool recorded = kind == StopEvent::Kind::Signal;
    EXPECT_EQ(out.runsOut, recorded ? 1u : 0u);
    ASSERT_EQ(records.size(), 1 + kVdsoPatience + (recorded ? 1 : 0));
    EXPECT_EQ(records.back().gap, recorded);
    EXPECT_EQ(records.back().regs[kRax], recorded ? 42u : 0u);
  }
}

TEST(Stepper, UntilStopsAtTheLocationAndAForeignStopEndsTheTraceForTheUser) {
  LoopMachine machine;
  Stepper stepper(machine);
  StepOutcome until = stepper.run({1001, 100, {0x1007}, false, {}});
  EXPECT_EQ(until.trace.size(), 3u);
  EXPECT_EQ(until.endReason, "the pc reached 0x1007");
  EXPECT_TRUE(until.reachedUntil);

  machine.signalAtStep = 4;
  StepOutcome interrupted = stepper.run({1001, 100, {}, false, {}});
  ASSERT_TRUE(interrupted.userStop);
  EXPECT_EQ(interrupted.userStop->signo, 11);
  EXPECT_EQ(interrupted.trace.size(), 5u); // the 4 steps before the signal are kept
}

TEST(Stepper, AWatchpointStopKeepsTheInstructionThatFiredIt) {
  LoopMachine machine;
  machine.watched = 0x8000;
  Stepper stepper(machine);
  StepOutcome out = stepper.run({1001, 100, {}, true, {}});
  ASSERT_TRUE(out.userStop);
  EXPECT_EQ(out.endReason, "watchpoint 1");
  // add, then the store that fired: it ran, so the trace ends with it and what it wrote.
  ASSERT_EQ(out.trace.size(), 3u);
  const TraceRecord store = out.trace.records()[2];
  EXPECT_EQ(store.instruction, (std::vector<uint8_t>{0x48, 0x89, 0x03}));
  EXPECT_EQ(store.regs[kRip], 0x1007u);
  ASSERT_EQ(store.memory.size(), 1u);
  EXPECT_EQ(store.memory[0].writtenValue, (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(Stepper, ATimeLimitEndsSteppingShortOfTheLocation) {
  LoopMachine machine;
  Stepper stepper(machine);
  StepOutcome limited = stepper.run({1001, 100'000, {0xdead}, false, {}, 1});
  EXPECT_FALSE(limited.reachedUntil);
  EXPECT_FALSE(limited.userStop);
  EXPECT_EQ(limited.trace.size(), 2u) << limited.endReason; // one step, then the limit
  EXPECT_EQ(limited.endReason, "the time limit was reached");
}

// A front-end that cannot end its steps everywhere (LLDB's at the pc a run of them began at) keeps
// the Stepper stepping, and recording, until it can.
TEST(Stepper, ATimeLimitWaitsForAStopTheSteppingScopeCanEndAt) {
  LoopMachine machine;
  machine.mayStopAt = 0x1000; // after add (0x1004), mov (0x1007), then jmp
  StepOutcome limited = Stepper(machine).run({1001, 100'000, {}, false, {}, 1});
  EXPECT_EQ(limited.endReason, "the time limit was reached");
  ASSERT_EQ(limited.trace.size(), 4u);
  EXPECT_EQ(limited.trace.records()[3].regs[kRip], 0x1000u);
}

TEST(Stepper, CtrlCEndsSteppingAndKeepsTheStepsTaken) {
  LoopMachine machine;
  machine.interruptAtStep = 5;
  Stepper stepper(machine);
  StepOutcome out = stepper.run({1001, 100, {}, true, {}});
  EXPECT_EQ(out.endReason, "interrupted");
  EXPECT_FALSE(out.userStop) << "an interruption is not a stop of the program's own";
  ASSERT_EQ(out.trace.size(), 6u); // the starting state and the 5 steps before Ctrl-C
  const TraceRecord last = out.trace.records()[5];
  EXPECT_EQ(last.regs[kRip], 0x1007u); // add, mov, jmp, add, mov
  EXPECT_EQ(last.regs[kRax], 2u);
}

// A front-end may keep the steps to itself while the scope lives (LLDB steps inside
// lldb-server): every step is inside it, and it ends with the run, however the run ends.
TEST(Stepper, EveryStepIsInsideTheSteppingScopeWhichEndsWithTheRun) {
  LoopMachine machine;
  StepOutcome out = Stepper(machine).run({1001, 6, {}, true, {}});
  EXPECT_EQ(machine.steppingTid, 1001u);
  EXPECT_EQ(machine.stepsInScope, 6u);
  EXPECT_FALSE(machine.steppingScopeAlive);

  LoopMachine interrupted;
  interrupted.interruptAtStep = 2;
  out = Stepper(interrupted).run({1001, 6, {}, false, {}});
  EXPECT_EQ(out.trace.size(), 3u);
  EXPECT_FALSE(interrupted.steppingScopeAlive);
}

// The scope hears of the stops the Stepper plans: its `until` pcs, and its count's last step
// before that step is made.
TEST(Stepper, TheSteppingScopeHearsWhereSteppingWillStop) {
  LoopMachine counted;
  Stepper(counted).run({1001, 6, {}, false, {}});
  EXPECT_TRUE(counted.steppingUntil.empty());
  EXPECT_EQ(counted.lastStepHeardAfter, (std::vector<size_t>{5}));

  LoopMachine until;
  StepOutcome out = Stepper(until).run({1001, 6, {0x1007, 0x2000}, false, {}});
  EXPECT_TRUE(out.reachedUntil);
  EXPECT_EQ(until.steppingUntil, (std::set<uint64_t>{0x1007, 0x2000}));
  EXPECT_TRUE(until.lastStepHeardAfter.empty()) << "stopped at 0x1007 after 2 of 6 steps";
}

TEST(StepCommand, AThreadInsideASystemCallIsNamedBeforeTheWait) {
  LoopMachine machine;
  machine.regs[kOrigRax] = 230; // clock_nanosleep, as a sleeping process is attached
  Session session(&machine, "fake");
  std::string out;
  ASSERT_TRUE(session.execute("step --count 2 --quiet", out)) << out;
  EXPECT_NE(machine.printed.find("strobe: thread 1001 is inside system call 230; the first step "
                                 "waits until it returns (Ctrl-C ends stepping)"),
            std::string::npos)
      << machine.printed;
  EXPECT_NE(out.find("stepped 2 instructions"), std::string::npos) << out;
}

TEST(StepCommand, UntilAnAddressWithoutCodeIsRefused) {
  LoopMachine machine;
  Session session(&machine, "fake");
  std::string out;
  EXPECT_FALSE(session.execute("step --until *0", out));
  EXPECT_EQ(out, "error: no code at '*0'; give a FUNCTION, FILE:LINE or *ADDRESS (a library not "
                 "loaded yet has none: a breakpoint there, which waits for it, ends the trace)\n");
  EXPECT_EQ(machine.regs[kRip], 0x1000u) << "not one step taken";
  out.clear();
  ASSERT_TRUE(session.execute("step --until *0x1007 --quiet", out)) << out;
  EXPECT_NE(out.find("stepped 2 instructions"), std::string::npos) << out;
}

// A location the count runs out before (0x1002 is inside an instruction): the end says so.
TEST(StepCommand, UntilALocationNotReachedSaysSo) {
  LoopMachine machine;
  Session session(&machine, "fake");
  std::string out;
  ASSERT_TRUE(session.execute("step --until *0x1002 --count 5 --quiet", out)) << out;
  EXPECT_NE(out.find("stepped 5 instructions"), std::string::npos) << out;
  EXPECT_NE(out.find("; *0x1002 was not reached in 5 instructions; "), std::string::npos) << out;
  out.clear();
  ASSERT_TRUE(session.execute("step --count 5 --quiet", out)) << out;
  EXPECT_NE(out.find("; the count was reached; "), std::string::npos) << out;
}

TEST(StepCommand, AThreadInUserCodeStepsWithoutANote) {
  LoopMachine machine;
  Session session(&machine, "fake");
  std::string out;
  ASSERT_TRUE(session.execute("step --count 2 --quiet", out)) << out;
  EXPECT_EQ(machine.printed.find("system call"), std::string::npos) << machine.printed;
  EXPECT_NE(out.find("stepped 2 instructions"), std::string::npos) << out;
}

// A target without some extended registers (LLDB on a qemu AArch64 with SVE has no v0-v31): the
// trace holds them as 0, and the user is told which.
TEST(StepCommand, ExtendedRegistersTheTargetLacksAreNamed) {
  struct Lacking : LoopMachine {
    std::vector<std::string> absent;
    bool readExtended(uint64_t, ExtendedSnapshot &out) override {
      out.values.assign(registerTable(Isa::X86_64).extSlots(), 0);
      out.absent = absent;
      return true;
    }
  };
  Lacking machine;
  machine.absent = {"ftag", "ymm0h", "ymm1h", "ymm2h", "ymm4h", "ymm5h"};
  Session session(&machine, "fake");
  std::string out;
  ASSERT_TRUE(session.execute("step --count 2 --quiet", out)) << out;
  EXPECT_NE(out.find("strobe: this target has no ftag, ymm0h-ymm2h, ymm4h-ymm5h: the trace holds "
                     "0 for them\n"),
            std::string::npos)
      << out;
  machine.absent = {"tpidr"};
  out.clear();
  ASSERT_TRUE(session.execute("step --count 2 --quiet", out)) << out;
  EXPECT_NE(out.find("strobe: this target has no tpidr: the trace holds 0 for it\n"),
            std::string::npos)
      << out;
  machine.absent.clear();
  out.clear();
  ASSERT_TRUE(session.execute("step --count 2 --quiet", out)) << out;
  EXPECT_EQ(out.find("this target has no"), std::string::npos) << out;
  machine.absent = {"ymm3h"};
  StepOutcome stepped = Stepper(machine).run({1001, 2, {}, false, {}});
  EXPECT_EQ(stepped.absentExtended, std::vector<std::string>{"ymm3h"});
  EXPECT_EQ(stepped.trace.records()[2].ext.size(), registerTable(Isa::X86_64).extSlots());
}

// A capture of steps alone was described as "0 samples of 0 threads, 1 step trace, 0 stops over
// 0 ns": samples, stops and a duration belong to sampling.
TEST(StepCommand, StatusOfAStepTraceSaysNothingOfSampling) {
  LoopMachine machine;
  Session session(&machine, "fake");
  std::string out;
  ASSERT_TRUE(session.execute("step --count 2 --quiet", out)) << out;
  out.clear();
  ASSERT_TRUE(session.execute("status", out)) << out;
  EXPECT_EQ(out, "strobe: idle; holding a capture (live): 1 step trace\n");
}
