// Likelihood of a combination pattern (spec 000, S110-S112): how plausible the order of an
// interleaving of partial sequences is, from the likelihood of each sample following the previous.
#pragma once

#include "analysis/looptrace/Element.h"
#include "analysis/looptrace/Scorer.h"

#include <cstdint>
#include <span>
#include <vector>

namespace strobe {

// A merge fixes the relative order of original partial sequences; the pattern's samples are their
// round-robin interleaving in that order (each round takes the next sample of every original that
// still has one).
using Order = std::vector<uint32_t>; // indices of originals

PartialSequence roundRobin(const Order &order, std::span<const PartialSequence> originals);

// Σ likelihood(z_{j-1}, z_j): the literal likelihood of a pattern.
int64_t sequenceLikelihood(const PartialSequence &sequence, const Scorer &scorer);

// The pairwise decomposition: when every original has one sample per round, the round-robin
// sequence's transitions are exactly those between originals adjacent in the order (same round)
// plus those from the last original to the first (next round). That stays exact when lengths
// differ by at most one and never grow along the order, as count-mode phases in their true order
// do; otherwise the two forms differ in the rounds where some originals have run out.
int64_t adjacentLikelihood(const PartialSequence &x, const PartialSequence &y,
                           const Scorer &scorer); // Σ_k likelihood(x_k, y_k)
int64_t wrapLikelihood(const PartialSequence &last, const PartialSequence &first,
                       const Scorer &scorer); // Σ_k likelihood(last_k, first_{k+1})
int64_t pairwiseLikelihood(const Order &order, std::span<const PartialSequence> originals,
                           const Scorer &scorer);

} // namespace strobe
