#include "capture/Stepper.h"
#include "isa/StepLanding.h"
#include "target/SystemCalls.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <set>

namespace strobe {
namespace {

// The longest instruction of any supported ISA (x86-64: 15 bytes).
constexpr size_t kLongestInstruction = 15;
constexpr uint64_t kProgressEvery = 10'000;
// x86-64 EFLAGS bits the single-step mechanism itself sets (TF, RF): not the program's state.
constexpr uint64_t kX86StepFlags = 0x100 | 0x10000;

uint64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

// A single step runs one iteration of a rep string instruction: its accesses are that
// iteration's, which the model names only when told so.
Stepper::Stepper(Target &target)
    : target_(target), isa_(target.isa()), decoder_(isa_, RepeatedStrings::OneIterationPerStep) {}

bool Stepper::readState(uint64_t tid, TraceRecord &record) {
  if (!target_.readThread(tid, 1, snapshot_))
    return false;
  const RegisterTable &table = registerTable(isa_);
  record.regs = snapshot_.regs;
  record.regs.resize(table.regs.size());
  if (isa_ == Isa::X86_64)
    for (size_t i = 0; i < table.regs.size(); ++i)
      if (table.regs[i] == "eflags")
        record.regs[i] &= ~kX86StepFlags;
  record.ext.clear();
  if (extended_) {
    ExtendedSnapshot ext;
    // A front-end that cannot read them for the first record records none for the whole trace,
    // so that every record of the trace describes the same state.
    if (target_.readExtended(tid, ext) && ext.values.size() == table.extSlots()) {
      record.ext = std::move(ext.values);
      absentExtended_ = std::move(ext.absent);
    } else
      extended_ = false;
  }
  return true;
}

bool Stepper::landsThere(const InstructionInfo &insn, const TraceRecord &before, uint64_t pc) {
  // An x86-64 return leaves the word it goes to in memory, where the stack was.
  const std::optional<uint64_t> returnAddress = returnAddressOf(
      isa_, insn, before.regs[registerTable(isa_).sp],
      [this](uint64_t address, size_t size) { return target_.readMemory(address, size); });
  return stepMayLandAt(insn, returnAddress, pc);
}

std::span<const uint8_t> Stepper::instructionAt(uint64_t pc) {
  auto it = code_.find(pc);
  if (it == code_.end())
    it = code_.emplace(pc, target_.readMemory(pc, kLongestInstruction)).first;
  return it->second;
}

std::optional<uint64_t> Stepper::returnOutOf(uint64_t tid, std::pair<uint64_t, uint64_t> code) {
  constexpr unsigned kCallsDeep = 8; // a clock read's calls inside the vDSO
  ThreadSnapshot unwound;
  if (!target_.readThread(tid, kCallsDeep, unwound))
    return std::nullopt;
  auto outside = [&](uint64_t address) { return address < code.first || address >= code.second; };
  auto caller = std::find_if(unwound.stack.begin() + std::min<size_t>(1, unwound.stack.size()),
                             unwound.stack.end(), outside);
  if (caller == unwound.stack.end())
    return std::nullopt;
  const uint64_t address = *caller;
  for (size_t length = 1; length <= kLongestInstruction && length <= address; ++length) {
    const std::vector<uint8_t> bytes = target_.readMemory(address - length, length);
    const std::optional<InstructionInfo> insn = decoder_.decode(bytes, address - length);
    if (insn && insn->length == length && isCall(insn->kind))
      return address;
  }
  return std::nullopt;
}

bool Stepper::runOut(uint64_t tid, uint64_t returnAddress, TraceRecord &previous,
                     StepOutcome &outcome) {
  StopEvent stop = target_.runTo(tid, returnAddress);
  TraceRecord record;
  const bool readable = stop.kind != StopEvent::Kind::Exited &&
                        stop.kind != StopEvent::Kind::Exec && readState(tid, record);
  if (stop.kind == StopEvent::Kind::Step) {
    if (!readable)
      throw std::runtime_error(
          fmt::format("cannot read the registers of thread {} after a run", tid));
    if (record.regs[registerTable(isa_).pc] != returnAddress)
      stop = {StopEvent::Kind::Other, tid, 0, 0, "the thread stopped short of where it ran to"};
  }
  const bool arrived = stop.kind == StopEvent::Kind::Step;
  if (!arrived) {
    outcome.userStop = stop;
    outcome.endReason = stop.description.empty() ? "the process stopped" : stop.description;
    if (!readable || (record.regs == previous.regs && record.ext == previous.ext))
      return false; // nothing left, or stopped before it ran anything
  }
  record.gap = true;
  ++outcome.runsOut;
  outcome.trace.append(record);
  previous = std::move(record);
  return arrived;
}

StepOutcome Stepper::run(const StepRequest &request) {
  StepOutcome outcome(StepTrace(isa_, request.tid, request.memory));
  const unsigned pcIndex = registerTable(isa_).pc;
  uint64_t begin = nowNs();

  TraceRecord previous;
  if (!readState(request.tid, previous))
    throw std::runtime_error(fmt::format("cannot read the registers of thread {}", request.tid));
  outcome.trace.append(previous);
  // Pcs of the records not yet handed to request.recordedPcs, each once.
  std::set<uint64_t> seen{previous.regs[pcIndex]};
  std::vector<uint64_t> unnamed{previous.regs[pcIndex]};
  auto handOver = [&] {
    if (request.recordedPcs && !unnamed.empty())
      request.recordedPcs(unnamed);
    unnamed.clear();
  };
  auto noteRecorded = [&](const TraceRecord &record) {
    if (const uint64_t at = record.regs[pcIndex]; seen.insert(at).second)
      unnamed.push_back(at);
  };
  outcome.absentExtended = absentExtended_;
  uint64_t inVdso = 0; // steps in a row that landed inside request.vdso
  // Where the call that entered the vDSO returns to, if a call did.
  std::optional<uint64_t> vdsoReturn;
  bool stuckTold = false;

  const std::unique_ptr<SteppingScope> stepping = target_.beginStepping(request.tid, request.until);
  try {
    while (outcome.instructions() < request.count) {
      uint64_t pc = previous.regs[pcIndex];
      std::span<const uint8_t> bytes = instructionAt(pc);
      std::optional<InstructionInfo> insn = decoder_.decode(bytes, pc);
      if (!insn) {
        outcome.endReason = fmt::format("the bytes at {:#x} are not an instruction", pc);
        break;
      }
      TraceRecord record;
      std::optional<std::vector<MemorySlot>> slots;
      if (request.memory) {
        std::vector<uint64_t> before = previous.regs;
        before.insert(before.end(), previous.ext.begin(), previous.ext.end());
        slots = decoder_.slots(bytes.first(insn->length), pc, before);
        if (!slots)
          ++outcome.unpredictedMemory;
        for (const MemorySlot &slot : slots.value_or(std::vector<MemorySlot>{})) {
          MemoryAccess access{slot.address, slot.size, slot.read, slot.write, {}, {}};
          if (slot.read)
            access.readValue = target_.readMemory(slot.address, slot.size);
          record.memory.push_back(std::move(access));
        }
      }

      if (stepping && outcome.instructions() + 1 == request.count)
        stepping->lastStepNext();
      // Name what ran before its code can go: an exec gives the new program's code the old
      // one's addresses, and the debugger forgets an unmapped library's names (dlclose).
      if (const uint64_t call = previous.regs[registerTable(isa_).systemCallNumber];
          insn->kind == BranchKind::Syscall) {
        const bool exec = replacesProgram(isa_, call);
        if (exec && stepping)
          stepping->execMayFollow();
        if (exec || unmapsMemory(isa_, call))
          handOver();
      }
      StopEvent stop = target_.stepInstruction(request.tid);
      if (stop.kind == StopEvent::Kind::Delivering)
        continue; // the instruction has not run; the next step delivers the signal
      const bool completed = stop.kind == StopEvent::Kind::Step;
      if (!completed) {
        outcome.userStop = stop;
        outcome.endReason = stop.description.empty() ? "the process stopped" : stop.description;
        // A watchpoint, or a breakpoint the step landed on, stops the thread after the
        // instruction ran: it belongs in the trace. A signal or a fault stops it before, with
        // the state unchanged (a rep string iteration moves its registers, not always the pc).
        if (stop.kind == StopEvent::Kind::Exited || stop.kind == StopEvent::Kind::Exec ||
            !readState(request.tid, record) ||
            (record.regs == previous.regs && (record.ext.empty() || record.ext == previous.ext)))
          break;
      } else if (!readState(request.tid, record)) {
        throw std::runtime_error(
            fmt::format("cannot read the registers of thread {} after a step", request.tid));
      }
      if (completed && !landsThere(*insn, previous, record.regs[pcIndex])) {
        // Not this instruction's doing: the record holds the state the thread was moved to.
        record.gap = true;
        record.memory.clear();
        ++outcome.moves;
      } else {
        record.instruction.assign(bytes.begin(), bytes.begin() + insn->length);
        for (MemoryAccess &access : record.memory)
          if (access.write)
            access.writtenValue = target_.readMemory(access.address, access.size);
        // A value that could not be read (unmapped, a guard page) makes the access
        // unrecordable.
        record.memory.eraseIf([](const MemoryAccess &a) {
          return (a.read && a.readValue.size() != a.size) ||
                 (a.write && a.writtenValue.size() != a.size);
        });
        // A step that ran a rep string instruction whole (LLDB's own step does) ran more
        // iterations than the one whose accesses were read: its memory is not known.
        if (const std::optional<unsigned> count = registerTable(isa_).repeatCount;
            insn->repeated && count && !record.memory.empty() &&
            previous.regs[*count] - record.regs[*count] > 1) {
          record.memory.clear();
          ++outcome.unpredictedMemory;
        }
      }
      outcome.trace.append(record);
      noteRecorded(record);
      const uint64_t at = record.regs[pcIndex];
      const bool inside = at >= request.vdso.first && at < request.vdso.second;
      if (inside && !inVdso)
        vdsoReturn = !record.gap && isCall(insn->kind) ? std::optional<uint64_t>(pc + insn->length)
                                                       : std::nullopt;
      inVdso = inside ? inVdso + 1 : 0;
      previous = std::move(record);
      if (!completed)
        break;
      if (inVdso == kVdsoPatience && outcome.instructions() < request.count) {
        if (!vdsoReturn) // the trace began inside
          vdsoReturn = returnOutOf(request.tid, request.vdso);
        if (!std::exchange(stuckTold, true) && request.stuckInVdso)
          request.stuckInVdso(vdsoReturn.has_value());
        if (vdsoReturn) {
          const bool arrived = runOut(request.tid, *vdsoReturn, previous, outcome);
          noteRecorded(previous);
          if (!arrived)
            break;
          inVdso = 0;
        }
      }

      if (request.progress && outcome.instructions() % kProgressEvery == 0)
        request.progress(outcome.instructions());
      if (request.until.count(previous.regs[pcIndex])) {
        outcome.endReason = fmt::format("the pc reached {:#x}", previous.regs[pcIndex]);
        outcome.reachedUntil = true;
        break;
      }
      if (request.maxDurationNs && nowNs() - begin > request.maxDurationNs &&
          (!stepping || stepping->mayStopHere())) {
        outcome.endReason = "the time limit was reached";
        break;
      }
    }
  } catch (const Interrupted &interrupted) {
    // What was recorded stands; an instruction stepped but not yet recorded is left out.
    outcome.endReason = interrupted.what();
  }
  handOver();
  if (outcome.endReason.empty()) {
    outcome.endReason = "the count was reached";
    outcome.countReached = true;
  }
  outcome.durationNs = nowNs() - begin;
  return outcome;
}

} // namespace strobe
