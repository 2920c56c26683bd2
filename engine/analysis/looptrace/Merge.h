// Merging two groups of partial sequences (spec 000, S109-S113): among the interleavings of their
// originals that keep each group's fixed order, find the one with the highest likelihood.
// Ties go to the pattern that takes from `x` earliest, so both searches return the same order.
#pragma once

#include "analysis/looptrace/Likelihood.h"

#include <cstdint>
#include <span>

namespace strobe {

enum class LikelihoodForm {
  RoundRobin, // the literal likelihood of each pattern's round-robin sequence
  Pairwise,   // the decomposition into terms between adjacent originals (see Likelihood.h)
};

struct MergedOrder {
  Order order;
  int64_t likelihood = 0; // in the form the search used
};

// The literal form: every one of the C(|x|+|y|, |x|) order-preserving patterns. Throws
// LoopTraceError when there are more than `patternLimit`.
MergedOrder mergeExhaustive(const Order &x, const Order &y,
                            std::span<const PartialSequence> originals, const Scorer &scorer,
                            LikelihoodForm form, uint64_t patternLimit);

// The efficient form: the best pattern under the pairwise likelihood by dynamic programming in
// O(|x|·|y|) steps.
MergedOrder mergeDynamic(const Order &x, const Order &y, std::span<const PartialSequence> originals,
                         const Scorer &scorer);

// C(n, k), saturating at UINT64_MAX.
uint64_t patternCount(uint64_t n, uint64_t k);

} // namespace strobe
