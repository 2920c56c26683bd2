#include "analysis/looptrace/Likelihood.h"

#include <algorithm>

namespace strobe {

PartialSequence roundRobin(const Order &order, std::span<const PartialSequence> originals) {
  size_t rounds = 0;
  size_t total = 0;
  for (uint32_t index : order) {
    rounds = std::max(rounds, originals[index].size());
    total += originals[index].size();
  }
  PartialSequence sequence;
  sequence.reserve(total);
  for (size_t round = 0; round < rounds; ++round)
    for (uint32_t index : order)
      if (round < originals[index].size())
        sequence.push_back(originals[index][round]);
  return sequence;
}

int64_t sequenceLikelihood(const PartialSequence &sequence, const Scorer &scorer) {
  int64_t total = 0;
  for (size_t j = 1; j < sequence.size(); ++j)
    total += scorer.likelihood(sequence[j - 1], sequence[j]);
  return total;
}

int64_t adjacentLikelihood(const PartialSequence &x, const PartialSequence &y,
                           const Scorer &scorer) {
  int64_t total = 0;
  for (size_t k = 0; k < std::min(x.size(), y.size()); ++k)
    total += scorer.likelihood(x[k], y[k]);
  return total;
}

int64_t wrapLikelihood(const PartialSequence &last, const PartialSequence &first,
                       const Scorer &scorer) {
  int64_t total = 0;
  for (size_t k = 0; k < last.size() && k + 1 < first.size(); ++k)
    total += scorer.likelihood(last[k], first[k + 1]);
  return total;
}

int64_t pairwiseLikelihood(const Order &order, std::span<const PartialSequence> originals,
                           const Scorer &scorer) {
  if (order.empty())
    return 0;
  int64_t total = 0;
  for (size_t j = 1; j < order.size(); ++j)
    total += adjacentLikelihood(originals[order[j - 1]], originals[order[j]], scorer);
  return total + wrapLikelihood(originals[order.back()], originals[order.front()], scorer);
}

} // namespace strobe
