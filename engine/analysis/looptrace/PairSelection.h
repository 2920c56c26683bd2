// Which two groups to merge next (spec 000, S104-S108): the most similar pairs, best first.
#pragma once

#include "analysis/looptrace/Groups.h"
#include "analysis/looptrace/Similarity.h"

#include <memory>
#include <span>
#include <vector>

namespace strobe {

struct GroupPair {
  uint32_t first = 0; // group ids, first < second
  uint32_t second = 0;

  bool operator==(const GroupPair &) const = default;
};

class PairSelection {
public:
  virtual ~PairSelection() = default;
  // Up to `count` distinct pairs of current groups, most similar first; ties in id order.
  virtual std::vector<GroupPair> best(const Groups &groups, size_t count) = 0;
  // Called after `groups` merged a pair into group `merged`.
  virtual void merged(const Groups &groups, uint32_t merged) = 0;
};

// The literal form: the raw similarity of the groups' merged sequences, recomputed for every pair
// at every step. Longer groups win by having more positions to compare.
std::unique_ptr<PairSelection> mergedSequenceSelection(std::span<const PartialSequence> originals,
                                                       const Scorer &scorer);

// The efficient form: a group pair is as similar as the most similar pair of its end members
// (first or last original of each), by mean similarity per compared position. Members only ever
// stop being ends, so one pass down the originals' pairs sorted by similarity finds every step's
// best pair: O(n² log n) for the whole merge.
std::unique_ptr<PairSelection> endMemberSelection(std::span<const PartialSequence> originals,
                                                  const Scorer &scorer);

} // namespace strobe
