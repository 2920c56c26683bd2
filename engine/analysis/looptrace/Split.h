// Splitting a sample stream into partial sequences, one per execution of the target (spec 000,
// S102). A debugger knows where iterations begin, so it splits by iteration identity; the spec's
// count split (every T/P samples) remains for a caller that knows T and P.
#pragma once

#include "analysis/looptrace/Element.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace strobe {

struct LoopSample {
  Element element;
  uint64_t time = 0;                 // samples are given in time order
  std::optional<uint64_t> iteration; // which execution of the target it fell in, when known
};

enum class SplitMethod {
  Marker,     // iteration ids count the hits of a breakpoint at the loop head
  Expression, // iteration ids are an induction variable read at each sample
  Count,      // T instructions per iteration sampled every P instructions
};

struct Split {
  SplitMethod method = SplitMethod::Marker;
  std::vector<PartialSequence> iterations;
  size_t droppedSamples = 0; // outside any iteration known to be complete
};

// A run of samples with the same id is one iteration. Samples without an id (before the first
// marker) are dropped, and so are runs that may have been cut short: the last run (sampling may
// have stopped inside it) and, for an expression, also the first (it may have begun before).
Split splitByIteration(std::span<const LoopSample> samples, SplitMethod method);

// Sample j falls on instruction firstOffset + j·P of the stream, hence in iteration
// floor((firstOffset + j·P) / T). Exact when T/P is not an integer.
Split splitByCount(std::span<const LoopSample> samples, uint64_t instructionsPerIteration,
                   uint64_t interval, uint64_t firstOffset = 0);

} // namespace strobe
