#include "analysis/looptrace/Similarity.h"

#include <algorithm>

namespace strobe {

double Score::mean() const {
  return terms == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(terms);
}

// An empty score has mean 0, so it stands in as 0/1.
bool Score::meanLess(const Score &a, const Score &b) {
  __int128 left = static_cast<__int128>(a.total) * std::max<int64_t>(b.terms, 1);
  __int128 right = static_cast<__int128>(b.total) * std::max<int64_t>(a.terms, 1);
  return left < right;
}

Score sequenceSimilarity(const PartialSequence &x, const PartialSequence &y, const Scorer &scorer) {
  Score score;
  score.terms = static_cast<int64_t>(std::min(x.size(), y.size()));
  for (int64_t i = 0; i < score.terms; ++i)
    score.total += scorer.similarity(x[i], y[i]);
  return score;
}

} // namespace strobe
