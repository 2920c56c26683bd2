// The score tables of spec 000: how plausible it is that two samples are neighbours (similarity,
// position-aligned across partial sequences) or that one directly follows the other (likelihood,
// adjacent within a merged pattern). Three sets are built in: count mode and time mode keyed by
// function + instruction ordinal (embodiment 1) and basic-block mode (embodiment 2), the latter
// also for time-interval samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strobe {

// A score per difference d: scores[d - first] inside the listed range, `otherwise` outside it.
class DeltaScores {
public:
  DeltaScores() = default;
  DeltaScores(int64_t first, std::vector<int32_t> scores, int32_t otherwise = 0);

  int32_t operator()(int64_t delta) const {
    if (delta < first_ || delta - first_ >= static_cast<int64_t>(scores_.size()))
      return otherwise_;
    return scores_[static_cast<size_t>(delta - first_)];
  }

private:
  int64_t first_ = 0;
  std::vector<int32_t> scores_;
  int32_t otherwise_ = 0;
};

enum class Keying {
  Ordinal, // function : instruction ordinal (embodiment 1)
  Block,   // function : basic block : offset in block (embodiment 2)
};

// One table (similarity or likelihood). Similarity looks the differences up by absolute value,
// likelihood by signed value (next minus previous).
struct PairTable {
  int32_t nameMatch = 0;
  int32_t nameMismatch = 0;
  DeltaScores offset; // ordinal difference, or in-block offset difference when the blocks match
  DeltaScores block;  // block-number difference (Keying::Block only)
};

struct ScoreTables {
  Keying keying = Keying::Ordinal;
  PairTable similarity;
  PairTable likelihood;
  // Beyond the spec: knowledge a debugger has and a hardware sampler does not.
  bool useCallingContext = false; // a different call site makes a different "name"
  int32_t contextOrder = 0;       // likelihood bonus for a call, return or later sibling call
  int32_t controlFlowEdge = 0;    // likelihood bonus for a real CFG edge (Keying::Block only)

  static ScoreTables countMode();
  static ScoreTables timeMode();
  static ScoreTables basicBlockMode();
  static ScoreTables basicBlockTimeMode();
};

} // namespace strobe
