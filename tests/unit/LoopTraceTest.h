// Synthetic loop bodies and an independent sampler for the loop-trace tests: the truth is built
// here instruction by instruction, and partial sequences are read off it by stepping every P-th
// instruction (or time unit), so nothing here uses the code under test.
#pragma once

#include "analysis/looptrace/Element.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace strobe::looptrace_test {

// func_M of the spec's Fig. 1, and the caller id its call sites belong to.
inline constexpr uint32_t kFuncA = 1, kFuncB = 2, kFuncC = 3, kFuncM = 9;

inline uint64_t pcOf(uint32_t function, uint32_t ordinal) {
  return 0x400000 + uint64_t{function} * 0x1000 + uint64_t{ordinal} * 4;
}

inline Element element(uint32_t function, uint32_t ordinal) {
  Element e;
  e.function = function;
  e.ordinal = ordinal;
  e.blockOffset = ordinal;
  e.pc = pcOf(function, ordinal);
  return e;
}

struct Call {
  uint32_t function;
  std::vector<uint32_t> blockSizes; // straight-line blocks, in order
  uint32_t callSite = 0;            // ordinal of the call in func_M; 0 = no calling context
};

// The instructions of one execution of a body that makes `calls` one after another.
inline std::vector<Element> makeBody(const std::vector<Call> &calls) {
  std::vector<Element> body;
  for (const Call &call : calls) {
    uint32_t ordinal = 0;
    for (uint32_t block = 0; block < call.blockSizes.size(); ++block)
      for (uint32_t offset = 0; offset < call.blockSizes[block]; ++offset) {
        Element e = element(call.function, ordinal++);
        e.block = block + 1;
        e.blockOffset = offset;
        if (call.callSite != 0)
          e.context = CallingContext{kFuncM, call.callSite};
        body.push_back(e);
      }
  }
  return body;
}

// The spec's func_M with embodiment 2's block sizes; call sites at ordinals 1, 3, 5, 7, 9.
inline std::vector<Element> funcMBody(bool withContext = false) {
  auto site = [withContext](uint32_t ordinal) { return withContext ? ordinal : 0u; };
  return makeBody({{kFuncA, {4, 3, 3}, site(1)},
                   {kFuncB, {3, 7}, site(3)},
                   {kFuncB, {3, 7}, site(5)},
                   {kFuncB, {3, 7}, site(7)},
                   {kFuncC, {10}, site(9)}});
}

// Runs `body` `iterations` times back to back and keeps every interval-th step from `phase`,
// split by the execution each sample fell in.
inline std::vector<std::vector<Element>>
sampleStream(const std::vector<Element> &body, size_t interval, size_t phase, size_t iterations) {
  std::vector<std::vector<Element>> sequences(iterations);
  for (size_t step = phase; step < body.size() * iterations; step += interval)
    sequences[step / body.size()].push_back(body[step % body.size()]);
  return sequences;
}

// The samples of one execution whose first sample falls on step `phase`.
inline std::vector<Element> sampleAt(const std::vector<Element> &body, size_t interval,
                                     size_t phase) {
  std::vector<Element> sequence;
  for (size_t step = phase; step < body.size(); step += interval)
    sequence.push_back(body[step]);
  return sequence;
}

// What time-interval sampling sees: every instruction repeated for the time units it runs.
inline std::vector<Element> expandByCost(const std::vector<Element> &body,
                                         const std::vector<uint32_t> &costs) {
  std::vector<Element> timeline;
  for (size_t i = 0; i < body.size(); ++i)
    timeline.insert(timeline.end(), costs[i], body[i]);
  return timeline;
}

inline std::vector<uint64_t> pcsOf(const std::vector<Element> &sequence) {
  std::vector<uint64_t> pcs;
  for (const Element &e : sequence)
    pcs.push_back(e.pc);
  return pcs;
}

inline std::string describe(const std::vector<Element> &sequence) {
  std::ostringstream out;
  for (const Element &e : sequence)
    out << char('A' + e.function - 1) << e.ordinal << ' ';
  return out.str();
}

} // namespace strobe::looptrace_test
