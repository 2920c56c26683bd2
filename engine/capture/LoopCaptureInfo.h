// What `strobe loop` records beyond the samples, so that a loop trace can be rebuilt from a saved
// capture (strobe-report loop FILE) exactly as it was in the debugger.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strobe {

enum class LoopSplit : uint8_t {
  Marker,     // a breakpoint at the loop head: iteration n runs between its n-th and n+1-th hit
  PerSample,  // iterations far shorter than the sampling period: each sample is its own iteration
  Expression, // an induction register or variable read at each sample stop
  Count,      // every `countT` samples (spec 000's T/P split, P = 1), for callers who know T
};

struct MarkerHit {
  uint64_t tid = 0;
  uint64_t timeNs = 0; // since the capture started, on the samples' clock
};

struct LoopCaptureInfo {
  std::string location;       // as the user named the loop
  uint64_t functionStart = 0; // the function holding the loop (its code is in Capture::code)
  uint64_t head = 0;          // the loop head, or the function's entry for a whole function
  bool wholeFunction = false; // the target is one call of the function, not a loop in it
  uint64_t tid = 0;           // the thread that ran the loop when the capture began
  LoopSplit split = LoopSplit::Marker;
  std::string expression;                      // LoopSplit::Expression
  uint64_t countT = 0;                         // LoopSplit::Count
  std::vector<MarkerHit> markerHits;           // LoopSplit::Marker, in time order
  std::map<size_t, uint64_t> expressionValues; // sample index -> the expression's value there
  // CPU time the loop's thread got during the capture (0: unknown, not on this host): beside the
  // capture's duration, how much the stops slowed a CPU-bound loop down.
  uint64_t threadCpuNs = 0;
};

} // namespace strobe
