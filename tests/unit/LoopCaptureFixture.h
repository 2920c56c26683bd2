// A hand-built `strobe loop` capture of spec 000's func_M program, for the FromCapture and report
// tests: real x86-64 bytes (func_M = five `call rax` and `ret`; func_A/B/C = nine `add rax, rdi`
// and `ret`), an execution simulated instruction by instruction and sampled every P-th
// instruction. Nothing here uses the code under test.
#pragma once

#include "capture/Capture.h"
#include "target/Isa.h"

#include <cstdint>
#include <vector>

namespace strobe::loop_fixture {

inline constexpr uint64_t kMain = 0x1000; // no code in the capture: an uncoded function
inline constexpr uint64_t kFuncM = 0x2000;
inline constexpr uint64_t kFuncA = 0x3000, kFuncB = 0x3100, kFuncC = 0x3200;
inline constexpr uint64_t kStack = 0x7fff0000; // sp inside func_M
inline constexpr unsigned kCallLength = 2;     // call rax
inline constexpr unsigned kAddLength = 3;      // add rax, rdi

inline std::vector<uint8_t> callerBytes() {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 5; ++i)
    bytes.insert(bytes.end(), {0xff, 0xd0});
  bytes.push_back(0xc3);
  return bytes;
}

inline std::vector<uint8_t> calleeBytes() {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 9; ++i)
    bytes.insert(bytes.end(), {0x48, 0x01, 0xf8});
  bytes.push_back(0xc3);
  return bytes;
}

// One executed instruction: where, the return addresses above it, and the stack pointer.
struct Step {
  uint64_t pc;
  std::vector<uint64_t> returns;
  uint64_t sp;
};

// func_M calling `callees` (five entry addresses) in turn, then main's 3 instructions until the
// next call. func_M's ordinal k is its k-th call (k < 5) or the ret (k = 5).
inline std::vector<Step> iterationSteps(const std::vector<uint64_t> &callees) {
  const uint64_t mainReturn = kMain + 5;
  std::vector<Step> steps;
  for (size_t k = 0; k < callees.size(); ++k) {
    uint64_t call = kFuncM + k * kCallLength;
    steps.push_back({call, {mainReturn}, kStack});
    for (unsigned i = 0; i < 10; ++i)
      steps.push_back({callees[k] + i * kAddLength, {call + kCallLength, mainReturn}, kStack - 8});
  }
  steps.push_back({kFuncM + 5 * kCallLength, {mainReturn}, kStack});
  for (unsigned i = 0; i < 3; ++i)
    steps.push_back({kMain + 5 + i, {}, kStack + 8});
  return steps;
}

inline const std::vector<uint64_t> kSpecCallees{kFuncA, kFuncB, kFuncB, kFuncB, kFuncC};

inline Capture emptyCapture() {
  Capture capture;
  capture.header.isa = Isa::X86_64;
  capture.header.periodNs = 1;
  capture.header.stackDepth = 4;
  capture.modules.push_back({"/bin/funcm", "", 0x1000, 0x4000, 0});
  capture.code[kFuncM] = callerBytes();
  for (uint64_t callee : {kFuncA, kFuncB, kFuncC})
    capture.code[callee] = calleeBytes();
  const std::pair<uint64_t, const char *> names[] = {{kMain, "main"},
                                                     {kFuncM, "func_M"},
                                                     {kFuncA, "func_A"},
                                                     {kFuncB, "func_B"},
                                                     {kFuncC, "func_C"}};
  for (const auto &[start, name] : names)
    capture.symbols[start] = {name, start, start == kFuncM ? 11u : 30u, "funcm.c", 1, {}};
  LoopCaptureInfo loop;
  loop.location = "func_M";
  loop.functionStart = kFuncM;
  loop.head = kFuncM;
  loop.wholeFunction = true;
  loop.tid = 7;
  capture.loop = loop;
  return capture;
}

// Runs the iterations (each its steps) one after another in `capture`, one nanosecond per
// instruction, and samples every `interval`-th instruction starting at `phase`; marker hits at
// each iteration's start.
inline Capture sampledSteps(Capture capture, const std::vector<std::vector<Step>> &iterations,
                            uint64_t interval, uint64_t phase = 0) {
  uint64_t time = 0;
  for (const std::vector<Step> &steps : iterations) {
    capture.loop->markerHits.push_back({7, time});
    for (const Step &step : steps) {
      if (time >= phase && (time - phase) % interval == 0) {
        Sample sample;
        sample.timeNs = time;
        sample.tid = 7;
        sample.stack.push_back(step.pc);
        sample.stack.insert(sample.stack.end(), step.returns.begin(), step.returns.end());
        capture.samples.push_back(sample);
      }
      ++time;
    }
  }
  return capture;
}

// sampledSteps() of func_M calling each of `iterations` (callee lists) in turn.
inline Capture sampledCapture(const std::vector<std::vector<uint64_t>> &iterations,
                              uint64_t interval, uint64_t phase = 0) {
  std::vector<std::vector<Step>> steps;
  for (const std::vector<uint64_t> &callees : iterations)
    steps.push_back(iterationSteps(callees));
  return sampledSteps(emptyCapture(), steps, interval, phase);
}

// The pcs of one single-stepped call of func_M, as `strobe loop --verify` records them: from the
// entry to the next entry, main's instructions in between.
inline StepTrace steppedIteration(const std::vector<uint64_t> &callees) {
  const RegisterTable &table = registerTable(Isa::X86_64);
  StepTrace trace(Isa::X86_64, 7, false);
  std::vector<Step> steps = iterationSteps(callees);
  steps.push_back({kFuncM, {kMain + 5}, kStack}); // the next entry
  for (const Step &step : steps) {
    TraceRecord record;
    record.regs.assign(table.regs.size(), 0);
    record.regs[table.pc] = step.pc;
    record.regs[table.sp] = step.sp;
    trace.append(record);
  }
  return trace;
}

// func_M's own instructions and its callees', in execution order: the true trace.
inline std::vector<uint64_t> truePcs(const std::vector<uint64_t> &callees) {
  std::vector<uint64_t> pcs;
  for (const Step &step : iterationSteps(callees))
    if (step.sp <= kStack)
      pcs.push_back(step.pc);
  return pcs;
}

} // namespace strobe::loop_fixture
