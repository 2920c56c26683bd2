// Scores one pair of samples with a set of tables: similarity(a, b) for samples at the same
// position of two partial sequences, likelihood(a, b) for b directly following a in a pattern.
#pragma once

#include "analysis/looptrace/Element.h"
#include "analysis/looptrace/ScoreTables.h"

#include <cstdint>
#include <vector>

namespace strobe {

// The basic-block edges of the functions the loop runs through, as the caller's disassembly
// found them (block numbers as in Element::block).
class ControlFlowEdges {
public:
  void add(uint32_t function, uint32_t fromBlock, uint32_t toBlock);
  bool contains(uint32_t function, uint32_t fromBlock, uint32_t toBlock) const;

private:
  struct Edge {
    uint32_t function, from, to;
    auto operator<=>(const Edge &) const = default;
  };
  std::vector<Edge> edges_; // sorted, unique
};

class Scorer {
public:
  // `edges` may be null; both must outlive the scorer.
  explicit Scorer(const ScoreTables &tables, const ControlFlowEdges *edges = nullptr);

  int32_t similarity(const Element &a, const Element &b) const;
  int32_t likelihood(const Element &previous, const Element &next) const;

private:
  bool sameName(const Element &a, const Element &b) const {
    return a.function == b.function && (!tables_.useCallingContext || a.context == b.context);
  }
  int32_t contextOrder(const Element &previous, const Element &next) const;
  bool isEdge(const Element &previous, const Element &next) const;

  const ScoreTables &tables_;
  const ControlFlowEdges *edges_;
};

} // namespace strobe
