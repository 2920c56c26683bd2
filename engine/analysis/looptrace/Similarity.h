// Similarity of two partial sequences (spec 000, S104-S107): how likely they are neighbours in the
// final trace, from their samples compared position by position from the head.
#pragma once

#include "analysis/looptrace/Element.h"
#include "analysis/looptrace/Scorer.h"

#include <cstdint>

namespace strobe {

// A sum of `terms` scores. Sums compare by their mean per term, so sequences of different lengths
// are comparable.
struct Score {
  int64_t total = 0;
  int64_t terms = 0;

  // Mean per term; 0 when there were none.
  double mean() const;
  // a.mean() < b.mean(), computed exactly.
  static bool meanLess(const Score &a, const Score &b);
};

// Σ similarity(x_i, y_i) over the first min(|x|, |y|) positions.
Score sequenceSimilarity(const PartialSequence &x, const PartialSequence &y, const Scorer &scorer);

} // namespace strobe
