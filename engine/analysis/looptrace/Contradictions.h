// Checking the precondition of reproducibility against the result (spec 000): a partial sequence
// whose samples do not fit where the merge had to put them was probably a different path.
#pragma once

#include "analysis/looptrace/Likelihood.h"

#include <span>
#include <vector>

namespace strobe {

// For every original, how many of its samples are misplaced in the round-robin sequence of
// `order`: a sample s between neighbours p and n is misplaced when p -> n is an ordered transition
// (likelihood above 0) that s does not improve on: l(p, s) + l(s, n) <= l(p, n). In a trace of a
// reproducible loop every sample continues its neighbours, so this does not happen.
std::vector<size_t> misplacedSamples(const Order &order, std::span<const PartialSequence> originals,
                                     const Scorer &scorer);

} // namespace strobe
