#include "analysis/looptrace/Contradictions.h"

#include <algorithm>

namespace strobe {

std::vector<size_t> misplacedSamples(const Order &order, std::span<const PartialSequence> originals,
                                     const Scorer &scorer) {
  struct Placed {
    const Element *element;
    uint32_t original;
  };
  std::vector<Placed> sequence;
  size_t rounds = 0;
  for (uint32_t index : order)
    rounds = std::max(rounds, originals[index].size());
  for (size_t round = 0; round < rounds; ++round)
    for (uint32_t index : order)
      if (round < originals[index].size())
        sequence.push_back({&originals[index][round], index});

  std::vector<size_t> misplaced(originals.size(), 0);
  for (size_t j = 1; j + 1 < sequence.size(); ++j) {
    const Element &previous = *sequence[j - 1].element;
    const Element &sample = *sequence[j].element;
    const Element &next = *sequence[j + 1].element;
    int64_t bypass = scorer.likelihood(previous, next);
    if (bypass > 0 &&
        scorer.likelihood(previous, sample) + scorer.likelihood(sample, next) <= bypass)
      ++misplaced[sequence[j].original];
  }
  return misplaced;
}

} // namespace strobe
