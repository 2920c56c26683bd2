// Rebuilds the ordered instruction trace of one execution of a repeatedly executed sequence (a loop
// body, a function called many times) from sparse samples of many executions: spec 000's greedy
// merge of partial sequences, with the summary a user needs to judge the result.
#pragma once

#include "analysis/looptrace/Element.h"
#include "analysis/looptrace/Merge.h"
#include "analysis/looptrace/ScoreTables.h"
#include "analysis/looptrace/Scorer.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace strobe {

enum class SamplingKind {
  Count, // every P-th instruction: a repeated sample is a duplicated phase, folded away
  Time,  // every P time units: repeats are execution-time weights
};

enum class PairSimilarity {
  MergedSequences, // literal: raw similarity of the groups' merged sequences
  EndMembers,      // efficient: best mean similarity between the groups' end members
};

enum class PatternSearch {
  Exhaustive,         // literal: every order-preserving pattern
  DynamicProgramming, // efficient: O(a·b), needs LikelihoodForm::Pairwise
};

struct ReconstructOptions {
  ScoreTables tables = ScoreTables::countMode();
  SamplingKind sampling = SamplingKind::Count;
  PairSimilarity pairSimilarity = PairSimilarity::EndMembers;
  PatternSearch search = PatternSearch::DynamicProgramming;
  LikelihoodForm likelihood = LikelihoodForm::Pairwise;
  size_t topPairs = 1;             // S108's variant: merge the best of the K most similar pairs
  uint64_t patternLimit = 1 << 20; // exhaustive search only
  // Similarity keeps all n²/2 pairs of distinct partial sequences (16 bytes each): 200 MB at 5,000.
  size_t sequenceLimit = 5000;
  const ControlFlowEdges *edges = nullptr; // Keying::Block: the CFG, for its likelihood bonus
  std::vector<uint64_t> loopInstructions;  // pcs of the target's instructions; empty = unknown

  static ReconstructOptions literal(ScoreTables tables, SamplingKind sampling);
  static ReconstructOptions efficient(ScoreTables tables, SamplingKind sampling);
};

// A partial sequence that contradicts the result (reproducibility violated), see Contradictions.h.
struct Contradiction {
  std::vector<size_t> iterations; // input indices holding this partial sequence
  size_t misplacedSamples = 0;
};

struct LoopTraceDiagnostics {
  size_t iterations = 0;        // non-empty partial sequences given
  size_t distinctSequences = 0; // after count mode folded identical ones
  size_t samples = 0;
  std::optional<double> coverage; // of loopInstructions by the samples' pcs
  size_t mergeSteps = 0;
  double meanStepLikelihood = 0; // each step's likelihood per transition, averaged over steps
  std::vector<Contradiction> contradictions;
};

struct LoopTrace {
  std::vector<WeightedElement> trace;
  std::vector<size_t> order; // input index of each merged partial sequence, in the final order
  LoopTraceDiagnostics diagnostics;
};

// Throws LoopTraceError for options that do not go together, more distinct partial sequences than
// the limit, or an exhaustive search over its limit.
LoopTrace reconstructLoopTrace(std::span<const PartialSequence> iterations,
                               const ReconstructOptions &options);

} // namespace strobe
