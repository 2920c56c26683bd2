#include "analysis/looptrace/Merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

namespace strobe {

uint64_t patternCount(uint64_t n, uint64_t k) {
  if (k > n)
    return 0;
  k = std::min(k, n - k);
  unsigned __int128 count = 1;
  for (uint64_t i = 1; i <= k; ++i) {
    count = count * (n - k + i) / i; // exact: C(m-1, i-1)·m = i·C(m, i)
    if (count > std::numeric_limits<uint64_t>::max())
      return std::numeric_limits<uint64_t>::max();
  }
  return static_cast<uint64_t>(count);
}

namespace {

// Walks the patterns in order of "take from x first" so the first best one found is the one the
// dynamic program picks on a tie.
class PatternWalk {
public:
  PatternWalk(const Order &x, const Order &y, std::span<const PartialSequence> originals,
              const Scorer &scorer, LikelihoodForm form)
      : x_(x), y_(y), originals_(originals), scorer_(scorer), form_(form) {}

  MergedOrder best() {
    pattern_.reserve(x_.size() + y_.size());
    extend(0, 0);
    return *best_;
  }

private:
  void extend(size_t i, size_t j) {
    if (i == x_.size() && j == y_.size())
      return consider();
    if (i < x_.size()) {
      pattern_.push_back(x_[i]);
      extend(i + 1, j);
      pattern_.pop_back();
    }
    if (j < y_.size()) {
      pattern_.push_back(y_[j]);
      extend(i, j + 1);
      pattern_.pop_back();
    }
  }

  void consider() {
    int64_t likelihood = form_ == LikelihoodForm::Pairwise
                             ? pairwiseLikelihood(pattern_, originals_, scorer_)
                             : sequenceLikelihood(roundRobin(pattern_, originals_), scorer_);
    if (!best_ || likelihood > best_->likelihood)
      best_ = MergedOrder{pattern_, likelihood};
  }

  const Order &x_;
  const Order &y_;
  std::span<const PartialSequence> originals_;
  const Scorer &scorer_;
  LikelihoodForm form_;
  Order pattern_;
  std::optional<MergedOrder> best_;
};

} // namespace

MergedOrder mergeExhaustive(const Order &x, const Order &y,
                            std::span<const PartialSequence> originals, const Scorer &scorer,
                            LikelihoodForm form, uint64_t patternLimit) {
  uint64_t patterns = patternCount(x.size() + y.size(), x.size());
  if (patterns > patternLimit)
    throw LoopTraceError(fmt::format("merging {} with {} partial sequences has {} patterns, more "
                                     "than the literal form's limit of {}",
                                     x.size(), y.size(), patterns, patternLimit));
  return PatternWalk(x, y, originals, scorer, form).best();
}

} // namespace strobe
