#include "analysis/looptrace/PairSelection.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>

namespace strobe {

namespace {

class MergedSequenceSelection final : public PairSelection {
public:
  MergedSequenceSelection(std::span<const PartialSequence> originals, const Scorer &scorer)
      : originals_(originals), scorer_(scorer) {}

  std::vector<GroupPair> best(const Groups &groups, size_t count) override {
    struct Candidate {
      int64_t similarity;
      GroupPair pair;
    };
    std::vector<uint32_t> ids = groups.ids();
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t j = i + 1; j < ids.size(); ++j) {
        Score score =
            sequenceSimilarity(sequence(groups, ids[i]), sequence(groups, ids[j]), scorer_);
        candidates.push_back({score.total, {ids[i], ids[j]}});
      }
    // Stable: equal similarities keep the id order they were generated in.
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const Candidate &a, const Candidate &b) { return a.similarity > b.similarity; });
    std::vector<GroupPair> pairs;
    for (size_t i = 0; i < std::min(count, candidates.size()); ++i)
      pairs.push_back(candidates[i].pair);
    return pairs;
  }

  void merged(const Groups &groups, uint32_t merged) override {
    for (auto it = sequences_.begin(); it != sequences_.end();)
      it = groups.order(it->first).empty() ? sequences_.erase(it) : std::next(it);
    sequences_.erase(merged);
  }

private:
  const PartialSequence &sequence(const Groups &groups, uint32_t id) {
    auto found = sequences_.find(id);
    if (found == sequences_.end())
      found = sequences_.emplace(id, roundRobin(groups.order(id), originals_)).first;
    return found->second;
  }

  std::span<const PartialSequence> originals_;
  const Scorer &scorer_;
  std::map<uint32_t, PartialSequence> sequences_; // round-robin sequence per group, on demand
};

class EndMemberSelection final : public PairSelection {
public:
  EndMemberSelection(std::span<const PartialSequence> originals, const Scorer &scorer) {
    uint32_t n = static_cast<uint32_t>(originals.size());
    pairs_.reserve(static_cast<size_t>(n) * (n - 1) / 2);
    for (uint32_t u = 0; u < n; ++u)
      for (uint32_t v = u + 1; v < n; ++v)
        pairs_.push_back({sequenceSimilarity(originals[u], originals[v], scorer).mean(), u, v});
    chunk_ = 8 * static_cast<size_t>(n);
  }

  std::vector<GroupPair> best(const Groups &groups, size_t count) override {
    while (next_ < pairs_.size() && !valid(groups, pairs_[sortedUpTo(next_)]))
      ++next_;
    std::vector<GroupPair> result;
    for (size_t at = next_; at < pairs_.size() && result.size() < count; ++at) {
      const MemberPair &member = pairs_[sortedUpTo(at)];
      if (!valid(groups, member))
        continue;
      uint32_t a = groups.groupOf(member.u);
      uint32_t b = groups.groupOf(member.v);
      GroupPair pair{std::min(a, b), std::max(a, b)};
      if (std::find(result.begin(), result.end(), pair) == result.end())
        result.push_back(pair);
    }
    return result;
  }

  void merged(const Groups &, uint32_t) override {}

private:
  // Compact: n = 2,000 originals make two million pairs. The mean is a ratio of small integers,
  // so equal means give equal doubles and different ones stay apart.
  struct MemberPair {
    double mean;
    uint32_t u, v;
  };

  static bool moreSimilar(const MemberPair &a, const MemberPair &b) {
    return a.mean != b.mean ? a.mean > b.mean : std::tie(a.u, a.v) < std::tie(b.u, b.v);
  }

  // Once invalid a pair stays invalid: ends only become inner members and groups only grow.
  static bool valid(const Groups &groups, const MemberPair &pair) {
    return groups.isEnd(pair.u) && groups.isEnd(pair.v) &&
           groups.groupOf(pair.u) != groups.groupOf(pair.v);
  }

  // Sorts lazily, a growing chunk at a time: the merge rarely reaches the dissimilar majority.
  size_t sortedUpTo(size_t at) {
    while (at >= sorted_) {
      size_t end = std::min(pairs_.size(), sorted_ + chunk_);
      std::nth_element(pairs_.begin() + sorted_, pairs_.begin() + end - 1, pairs_.end(),
                       moreSimilar);
      std::sort(pairs_.begin() + sorted_, pairs_.begin() + end, moreSimilar);
      sorted_ = end;
      chunk_ *= 2;
    }
    return at;
  }

  std::vector<MemberPair> pairs_; // [0, sorted_) most similar first, the rest less similar
  size_t sorted_ = 0;
  size_t chunk_ = 0;
  size_t next_ = 0; // every pair before it is invalid
};

} // namespace

std::unique_ptr<PairSelection> mergedSequenceSelection(std::span<const PartialSequence> originals,
                                                       const Scorer &scorer) {
  return std::make_unique<MergedSequenceSelection>(originals, scorer);
}

std::unique_ptr<PairSelection> endMemberSelection(std::span<const PartialSequence> originals,
                                                  const Scorer &scorer) {
  return std::make_unique<EndMemberSelection>(originals, scorer);
}

} // namespace strobe
