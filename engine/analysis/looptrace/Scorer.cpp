#include "analysis/looptrace/Scorer.h"

#include <algorithm>
#include <cstdlib>

namespace strobe {

void ControlFlowEdges::add(uint32_t function, uint32_t fromBlock, uint32_t toBlock) {
  Edge edge{function, fromBlock, toBlock};
  auto at = std::lower_bound(edges_.begin(), edges_.end(), edge);
  if (at == edges_.end() || *at != edge)
    edges_.insert(at, edge);
}

bool ControlFlowEdges::contains(uint32_t function, uint32_t fromBlock, uint32_t toBlock) const {
  return std::binary_search(edges_.begin(), edges_.end(), Edge{function, fromBlock, toBlock});
}

Scorer::Scorer(const ScoreTables &tables, const ControlFlowEdges *edges)
    : tables_(tables), edges_(edges) {}

static int64_t difference(uint32_t from, uint32_t to) {
  return static_cast<int64_t>(to) - static_cast<int64_t>(from);
}

int32_t Scorer::similarity(const Element &a, const Element &b) const {
  const PairTable &table = tables_.similarity;
  if (!sameName(a, b))
    return table.nameMismatch;
  if (tables_.keying == Keying::Ordinal)
    return table.nameMatch + table.offset(std::abs(difference(a.ordinal, b.ordinal)));
  int32_t score = table.nameMatch + table.block(std::abs(difference(a.block, b.block)));
  if (a.block == b.block)
    score += table.offset(std::abs(difference(a.blockOffset, b.blockOffset)));
  return score;
}

int32_t Scorer::likelihood(const Element &previous, const Element &next) const {
  const PairTable &table = tables_.likelihood;
  if (!sameName(previous, next))
    return table.nameMismatch + contextOrder(previous, next);
  if (tables_.keying == Keying::Ordinal)
    return table.nameMatch + table.offset(difference(previous.ordinal, next.ordinal));
  int32_t score = table.nameMatch + table.block(difference(previous.block, next.block));
  if (previous.block == next.block)
    score += table.offset(difference(previous.blockOffset, next.blockOffset));
  if (isEdge(previous, next))
    score += tables_.controlFlowEdge;
  return score;
}

// Leaving `previous`'s block (or re-entering it from its top) along an edge the code really has.
bool Scorer::isEdge(const Element &previous, const Element &next) const {
  if (edges_ == nullptr)
    return false;
  bool leavesBlock = previous.block != next.block || next.blockOffset <= previous.blockOffset;
  return leavesBlock && edges_->contains(previous.function, previous.block, next.block);
}

// Function boundaries are ordered by the call sites: entering a callee at or after the caller's
// sample, returning past the call, or moving on to a later call from the same caller.
int32_t Scorer::contextOrder(const Element &previous, const Element &next) const {
  if (!tables_.useCallingContext)
    return 0;
  const auto &from = previous.context;
  const auto &to = next.context;
  bool call = to && to->function == previous.function && previous.ordinal <= to->ordinal;
  bool ret = from && from->function == next.function && next.ordinal > from->ordinal;
  bool sibling = from && to && from->function == to->function && to->ordinal > from->ordinal;
  return call || ret || sibling ? tables_.contextOrder : 0;
}

} // namespace strobe
