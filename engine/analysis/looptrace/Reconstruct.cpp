#include "analysis/looptrace/Reconstruct.h"

#include "analysis/looptrace/Contradictions.h"
#include "analysis/looptrace/Groups.h"
#include "analysis/looptrace/PairSelection.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace strobe {

ReconstructOptions ReconstructOptions::literal(ScoreTables tables, SamplingKind sampling) {
  ReconstructOptions options;
  options.tables = std::move(tables);
  options.sampling = sampling;
  options.pairSimilarity = PairSimilarity::MergedSequences;
  options.search = PatternSearch::Exhaustive;
  options.likelihood = LikelihoodForm::RoundRobin;
  return options;
}

ReconstructOptions ReconstructOptions::efficient(ScoreTables tables, SamplingKind sampling) {
  ReconstructOptions options;
  options.tables = std::move(tables);
  options.sampling = sampling;
  return options;
}

namespace {

// The partial sequences the merge works on. In count mode two iterations sampled at the same phase
// yield the same sequence; merging both would list every instruction twice, so they are one.
struct Originals {
  std::vector<PartialSequence> sequences;
  std::vector<std::vector<size_t>> iterations; // input indices per original
};

size_t hashSequence(const PartialSequence &sequence) {
  size_t hash = sequence.size();
  auto mix = [&hash](uint64_t value) {
    hash = hash * 1099511628211ULL ^ std::hash<uint64_t>()(value);
  };
  for (const Element &element : sequence) {
    mix(element.pc);
    mix(element.function);
    mix(element.ordinal);
    mix(element.context ? element.context->ordinal : ~0ULL);
  }
  return hash;
}

Originals collectOriginals(std::span<const PartialSequence> iterations, SamplingKind sampling) {
  Originals originals;
  std::unordered_multimap<size_t, uint32_t> byHash;
  for (size_t index = 0; index < iterations.size(); ++index) {
    const PartialSequence &sequence = iterations[index];
    if (sequence.empty())
      continue;
    if (sampling == SamplingKind::Count) {
      size_t hash = hashSequence(sequence);
      auto [begin, end] = byHash.equal_range(hash);
      auto same = std::find_if(begin, end, [&](const auto &entry) {
        return originals.sequences[entry.second] == sequence;
      });
      if (same != end) {
        originals.iterations[same->second].push_back(index);
        continue;
      }
      byHash.emplace(hash, static_cast<uint32_t>(originals.sequences.size()));
    }
    originals.sequences.push_back(sequence);
    originals.iterations.push_back({index});
  }
  return originals;
}

// Consecutive samples of one instruction: in time mode its weight, in count mode an artefact.
std::vector<WeightedElement> weigh(const PartialSequence &sequence, SamplingKind sampling) {
  std::vector<WeightedElement> trace;
  for (const Element &element : sequence) {
    if (!trace.empty() && trace.back().element == element) {
      if (sampling == SamplingKind::Time)
        ++trace.back().weight;
      continue;
    }
    trace.push_back({element, 1});
  }
  return trace;
}

std::optional<double> coverage(std::span<const PartialSequence> iterations,
                               const std::vector<uint64_t> &loopInstructions) {
  if (loopInstructions.empty())
    return std::nullopt;
  std::unordered_set<uint64_t> wanted(loopInstructions.begin(), loopInstructions.end());
  std::unordered_set<uint64_t> covered;
  for (const PartialSequence &sequence : iterations)
    for (const Element &element : sequence)
      if (wanted.count(element.pc))
        covered.insert(element.pc);
  return static_cast<double>(covered.size()) / static_cast<double>(wanted.size());
}

void validate(const ReconstructOptions &options) {
  if (options.search == PatternSearch::DynamicProgramming &&
      options.likelihood != LikelihoodForm::Pairwise)
    throw LoopTraceError("the dynamic-programming merge needs the pairwise likelihood");
  if (options.topPairs == 0)
    throw LoopTraceError("at least one pair must be tried per merge step");
}

int64_t transitions(const Order &order, std::span<const PartialSequence> originals) {
  int64_t samples = 0;
  for (uint32_t index : order)
    samples += static_cast<int64_t>(originals[index].size());
  return std::max<int64_t>(samples - 1, 0);
}

} // namespace

LoopTrace reconstructLoopTrace(std::span<const PartialSequence> iterations,
                               const ReconstructOptions &options) {
  validate(options);
  Scorer scorer(options.tables, options.edges);
  Originals originals = collectOriginals(iterations, options.sampling);
  std::span<const PartialSequence> sequences = originals.sequences;

  LoopTrace result;
  LoopTraceDiagnostics &diagnostics = result.diagnostics;
  for (const std::vector<size_t> &members : originals.iterations)
    diagnostics.iterations += members.size();
  for (const PartialSequence &sequence : iterations)
    diagnostics.samples += sequence.size();
  diagnostics.distinctSequences = sequences.size();
  diagnostics.coverage = coverage(iterations, options.loopInstructions);
  if (sequences.empty())
    return result;
  if (sequences.size() > options.sequenceLimit)
    throw LoopTraceError(fmt::format("{} distinct partial sequences are more than the limit of {}; "
                                     "sample fewer iterations",
                                     sequences.size(), options.sequenceLimit));

  auto merge = [&](const Order &x, const Order &y) {
    return options.search == PatternSearch::DynamicProgramming
               ? mergeDynamic(x, y, sequences, scorer)
               : mergeExhaustive(x, y, sequences, scorer, options.likelihood, options.patternLimit);
  };
  Groups groups(sequences.size());
  std::unique_ptr<PairSelection> selection = options.pairSimilarity == PairSimilarity::EndMembers
                                                 ? endMemberSelection(sequences, scorer)
                                                 : mergedSequenceSelection(sequences, scorer);
  double stepLikelihoods = 0;
  while (groups.count() > 1) {
    GroupPair chosen;
    MergedOrder best;
    Score bestScore;
    bool first = true;
    for (const GroupPair &pair : selection->best(groups, options.topPairs)) {
      MergedOrder merged = merge(groups.order(pair.first), groups.order(pair.second));
      Score score{merged.likelihood, transitions(merged.order, sequences)};
      if (first || Score::meanLess(bestScore, score)) {
        chosen = pair;
        best = std::move(merged);
        bestScore = score;
        first = false;
      }
    }
    stepLikelihoods += bestScore.mean();
    ++diagnostics.mergeSteps;
    selection->merged(groups, groups.merge(chosen.first, chosen.second, std::move(best.order)));
  }
  if (diagnostics.mergeSteps > 0)
    diagnostics.meanStepLikelihood = stepLikelihoods / static_cast<double>(diagnostics.mergeSteps);

  const Order &order = groups.order(groups.ids().front());
  result.trace = weigh(roundRobin(order, sequences), options.sampling);
  std::vector<size_t> misplaced = misplacedSamples(order, sequences, scorer);
  for (uint32_t index : order) {
    result.order.push_back(originals.iterations[index].front());
    if (misplaced[index] > 0)
      diagnostics.contradictions.push_back({originals.iterations[index], misplaced[index]});
  }
  return result;
}

} // namespace strobe
