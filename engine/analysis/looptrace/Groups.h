// The current partial sequences during merging: each is a group of originals in a fixed order.
// A group's id is the lowest id of the groups merged into it, so ids stay stable and ordered.
#pragma once

#include "analysis/looptrace/Likelihood.h"

#include <cstdint>
#include <vector>

namespace strobe {

class Groups {
public:
  explicit Groups(size_t originals); // every original alone, group id = original index

  size_t count() const { return live_; }
  std::vector<uint32_t> ids() const; // ascending
  const Order &order(uint32_t group) const { return orders_[group]; }
  uint32_t groupOf(uint32_t original) const { return groupOf_[original]; }
  bool isEnd(uint32_t original) const; // first or last of its group

  // Replaces groups `a` and `b` by one holding `merged`; returns its id.
  uint32_t merge(uint32_t a, uint32_t b, Order merged);

private:
  std::vector<Order> orders_; // empty once merged away
  std::vector<uint32_t> groupOf_;
  size_t live_;
};

} // namespace strobe
