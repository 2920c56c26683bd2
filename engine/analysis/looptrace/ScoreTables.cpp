#include "analysis/looptrace/ScoreTables.h"

#include <utility>

namespace strobe {

DeltaScores::DeltaScores(int64_t first, std::vector<int32_t> scores, int32_t otherwise)
    : first_(first), scores_(std::move(scores)), otherwise_(otherwise) {}

// The values the spec's worked example uses: a name match is worth 10, offsets one apart are the
// best neighbours, and only ascending offsets make a plausible order.
ScoreTables ScoreTables::countMode() {
  ScoreTables tables;
  tables.similarity = {10, 0, DeltaScores(0, {0, 10, 6, 3}), {}};
  tables.likelihood = {10, 0, DeltaScores(1, {10, 6, 3}), {}};
  tables.contextOrder = 5;
  return tables;
}

// Time-interval samples repeat an instruction as long as it runs, so both tables peak at a
// difference of 0 and stay high for the next instruction.
ScoreTables ScoreTables::timeMode() {
  ScoreTables tables;
  tables.similarity = {10, 0, DeltaScores(0, {10, 8, 4, 2}), {}};
  tables.likelihood = {10, 0, DeltaScores(0, {10, 9, 5, 2}), {}};
  tables.contextOrder = 5;
  return tables;
}

// Embodiment 2: a name match is worth 5, the same block is best, and inside one block the
// offsets are scored as in count mode. Likelihood also rewards entering the next block.
ScoreTables ScoreTables::basicBlockMode() {
  ScoreTables tables;
  tables.keying = Keying::Block;
  tables.similarity = {5, 0, DeltaScores(0, {0, 10, 6, 3}), DeltaScores(0, {5, 2})};
  tables.likelihood = {5, 0, DeltaScores(1, {10, 6, 3}), DeltaScores(0, {5, 3})};
  tables.contextOrder = 3;
  tables.controlFlowEdge = 3;
  return tables;
}

// Embodiment 2 for time-interval samples: inside a block the offsets are scored as in time mode.
ScoreTables ScoreTables::basicBlockTimeMode() {
  ScoreTables tables = basicBlockMode();
  tables.similarity.offset = DeltaScores(0, {10, 8, 4, 2});
  tables.likelihood.offset = DeltaScores(0, {10, 9, 5, 2});
  return tables;
}

} // namespace strobe
