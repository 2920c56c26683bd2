// An exact instruction trace of one thread by single-stepping it through the Target port: one
// TraceRecord per instruction (registers after it, its bytes, and with `memory` the values it
// read and wrote), the first record being the state the trace starts from.
#pragma once

#include "capture/StepTrace.h"
#include "isa/InstructionInfo.h"
#include "target/Target.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace strobe {

struct StepRequest {
  uint64_t tid = 0;
  uint64_t count = 1000;    // instructions at most
  std::set<uint64_t> until; // stop when the pc reaches one of these (empty: count only)
  bool memory = false;      // record memory operands
  std::function<void(uint64_t)> progress; // called now and then with the instructions so far
  uint64_t maxDurationNs = 0;             // stepping gives up after this long (0: never)
  // Called with the pcs of the records made since its last call, before each system call that
  // replaces the program or unmaps memory (execve, and dlclose's munmap: their symbols go with
  // them) and at the end: the caller names them while their code is there.
  std::function<void(std::span<const uint64_t>)> recordedPcs = {};
  // The kernel's vDSO, [first, second). A clock read there retries for as long as the clock's
  // data changes under it, which a thread stepped one instruction at a time may never outrun.
  // After kVdsoPatience steps in a row inside it, the Stepper runs the thread to the return of
  // the call that entered it (Target::runTo; the debugger's unwinding says where, if the trace
  // began inside) and records the state there as after a gap; where it knows no such return, it
  // steps on. stuckInVdso is called the first time, with whether the Stepper runs the call out.
  std::pair<uint64_t, uint64_t> vdso = {0, 0};
  std::function<void(bool runOut)> stuckInVdso = {};
};

inline constexpr uint64_t kVdsoPatience = 1000; // a clock read takes under a hundred

struct StepOutcome {
  explicit StepOutcome(StepTrace trace) : trace(std::move(trace)) {}

  // The instructions the trace records: the start, the moves and the runs out are records of none.
  uint64_t instructions() const { return trace.size() - 1 - moves - runsOut; }

  StepTrace trace;
  // Why stepping ended: the count, the --until location, or a stop that is the user's (then
  // `userStop` holds it and the front-end must show it as it would without strobe).
  std::string endReason;
  std::optional<StopEvent> userStop;
  bool reachedUntil = false; // the pc reached one of the request's `until`
  bool countReached = false; // the request's count of instructions was stepped
  uint64_t durationNs = 0;
  uint64_t unpredictedMemory = 0; // instructions whose memory accesses the model cannot name
  // Records after a step that left the thread where its instruction cannot go (a signal's
  // delivery into its handler): they hold the state there, with no instruction, as after a gap.
  uint64_t moves = 0;
  // Records after a call stuck in the vDSO was run out (see StepRequest::vdso): they hold the
  // state at its return, as after a gap.
  uint64_t runsOut = 0;
  // Extended registers the target does not have (LLDB reads no SVE target's v0-v31): the trace
  // holds them as 0.
  std::vector<std::string> absentExtended;
};

class Stepper {
public:
  explicit Stepper(Target &target);

  StepOutcome run(const StepRequest &request);

private:
  bool readState(uint64_t tid, TraceRecord &record);
  std::span<const uint8_t> instructionAt(uint64_t pc);
  // Whether one step of `insn`, from the state `before`, can leave the thread at `pc`. A signal
  // delivered with the step moves it into the handler instead (LLDB may even run the handler's
  // first instruction in that step).
  bool landsThere(const InstructionInfo &insn, const TraceRecord &before, uint64_t pc);
  // Where `tid` returns to out of the calls it is inside in `code`, [first, second), as the
  // debugger unwinds them, if a call instruction ends there (an unwinding without the code's
  // frame information may guess).
  std::optional<uint64_t> returnOutOf(uint64_t tid, std::pair<uint64_t, uint64_t> code);
  // Runs thread `tid` out of a call stuck in the vDSO, to `returnAddress`, and records the state
  // it stops in as after a gap (into `previous` too). False when the run ended elsewhere: the
  // stop is the user's (in `outcome`).
  bool runOut(uint64_t tid, uint64_t returnAddress, TraceRecord &previous, StepOutcome &outcome);

  Target &target_;
  Isa isa_;
  InstructionDecoder decoder_;
  bool extended_ = true;                          // the front-end can read the ext registers
  std::vector<std::string> absentExtended_;       // as the last read of them said
  std::map<uint64_t, std::vector<uint8_t>> code_; // pc -> bytes read there (code does not change)
  ThreadSnapshot snapshot_;
};

} // namespace strobe
