#include "analysis/looptrace/Merge.h"

#include <algorithm>
#include <limits>

namespace strobe {

namespace {

// The pairwise likelihood of a pattern is a sum over consecutive originals plus the wrap term from
// the last to the first, so the best pattern is a shortest-path-like recursion over (taken from x,
// taken from y, which group the last one came from). The first original is fixed per run because
// the wrap term depends on it.
class MergeProgram {
public:
  MergeProgram(const Order &x, const Order &y, std::span<const PartialSequence> originals,
               const Scorer &scorer)
      : x_(x), y_(y), a_(x.size()), b_(y.size()) {
    auto term = [&](uint32_t from, uint32_t to) {
      return adjacentLikelihood(originals[from], originals[to], scorer);
    };
    xy_.resize(a_ * b_);
    yx_.resize(a_ * b_);
    for (size_t i = 0; i < a_; ++i)
      for (size_t j = 0; j < b_; ++j) {
        xy_[i * b_ + j] = term(x[i], y[j]);
        yx_[j * a_ + i] = term(y[j], x[i]);
      }
    for (size_t i = 0; i + 1 < a_; ++i)
      xx_.push_back(term(x[i], x[i + 1]));
    for (size_t j = 0; j + 1 < b_; ++j)
      yy_.push_back(term(y[j], y[j + 1]));
    for (int last = 0; last < 2; ++last)
      for (int first = 0; first < 2; ++first) {
        uint32_t lastIndex = last == kX ? x.back() : y.back();
        uint32_t firstIndex = first == kX ? x.front() : y.front();
        wrap_[last][first] = wrapLikelihood(originals[lastIndex], originals[firstIndex], scorer);
      }
  }

  MergedOrder best() {
    std::vector<int64_t> fromX = solve(kX);
    std::vector<int64_t> fromY = solve(kY);
    int64_t totalX = fromX[state(1, 0, kX)];
    int64_t totalY = fromY[state(0, 1, kY)];
    return totalX >= totalY ? trace(fromX, 1, 0, kX) : trace(fromY, 0, 1, kY);
  }

private:
  static constexpr int kX = 0;
  static constexpr int kY = 1;
  static constexpr int64_t kUnreachable = std::numeric_limits<int64_t>::min();

  size_t state(size_t i, size_t j, int last) const { return (i * (b_ + 1) + j) * 2 + last; }

  // Likelihood of appending x_i (or y_j) to a prefix of i from x and j from y ending in `last`.
  int64_t stepToX(size_t i, size_t j, int last) const {
    return last == kX ? xx_[i - 1] : yx_[(j - 1) * a_ + i];
  }
  int64_t stepToY(size_t i, size_t j, int last) const {
    return last == kX ? xy_[(i - 1) * b_ + j] : yy_[j - 1];
  }

  // best[state]: the highest likelihood of the rest of the pattern from that state, wrap included.
  std::vector<int64_t> solve(int first) const {
    std::vector<int64_t> best((a_ + 1) * (b_ + 1) * 2, kUnreachable);
    for (size_t i = a_ + 1; i-- > 0;)
      for (size_t j = b_ + 1; j-- > 0;)
        for (int last = kX; last <= kY; ++last) {
          if ((last == kX && i == 0) || (last == kY && j == 0))
            continue;
          int64_t value;
          if (i == a_ && j == b_) {
            value = wrap_[last][first];
          } else {
            value = kUnreachable;
            if (i < a_)
              value = stepToX(i, j, last) + best[state(i + 1, j, kX)];
            if (j < b_)
              value = std::max(value, stepToY(i, j, last) + best[state(i, j + 1, kY)]);
          }
          best[state(i, j, last)] = value;
        }
    return best;
  }

  // Follows the optimum forward, preferring x on ties.
  MergedOrder trace(const std::vector<int64_t> &best, size_t i, size_t j, int last) const {
    MergedOrder merged{{}, best[state(i, j, last)]};
    merged.order.push_back(last == kX ? x_[0] : y_[0]);
    while (i < a_ || j < b_) {
      if (i < a_ && stepToX(i, j, last) + best[state(i + 1, j, kX)] == best[state(i, j, last)]) {
        merged.order.push_back(x_[i++]);
        last = kX;
      } else {
        merged.order.push_back(y_[j++]);
        last = kY;
      }
    }
    return merged;
  }

  const Order &x_;
  const Order &y_;
  size_t a_, b_;
  std::vector<int64_t> xy_, yx_, xx_, yy_;
  int64_t wrap_[2][2] = {};
};

} // namespace

MergedOrder mergeDynamic(const Order &x, const Order &y, std::span<const PartialSequence> originals,
                         const Scorer &scorer) {
  if (x.empty() || y.empty()) {
    Order order = x.empty() ? y : x;
    return {order, pairwiseLikelihood(order, originals, scorer)};
  }
  return MergeProgram(x, y, originals, scorer).best();
}

} // namespace strobe
