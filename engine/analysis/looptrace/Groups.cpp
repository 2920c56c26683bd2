#include "analysis/looptrace/Groups.h"

#include <algorithm>
#include <utility>

namespace strobe {

Groups::Groups(size_t originals) : orders_(originals), groupOf_(originals), live_(originals) {
  for (uint32_t i = 0; i < originals; ++i) {
    orders_[i] = {i};
    groupOf_[i] = i;
  }
}

std::vector<uint32_t> Groups::ids() const {
  std::vector<uint32_t> ids;
  ids.reserve(live_);
  for (uint32_t id = 0; id < orders_.size(); ++id)
    if (!orders_[id].empty())
      ids.push_back(id);
  return ids;
}

bool Groups::isEnd(uint32_t original) const {
  const Order &order = orders_[groupOf_[original]];
  return order.front() == original || order.back() == original;
}

uint32_t Groups::merge(uint32_t a, uint32_t b, Order merged) {
  uint32_t kept = std::min(a, b);
  uint32_t gone = std::max(a, b);
  for (uint32_t original : orders_[gone])
    groupOf_[original] = kept;
  orders_[gone].clear();
  orders_[kept] = std::move(merged);
  --live_;
  return kept;
}

} // namespace strobe
