// Spec 000's worked example (the source's Fig. 1 program): every number here is the spec's, or
// worked out by hand from the spec's tables where the comment says so.
#include "LoopTraceTest.h"
#include "analysis/looptrace/EditDistance.h"
#include "analysis/looptrace/Merge.h"
#include "analysis/looptrace/Reconstruct.h"
#include "analysis/looptrace/Similarity.h"

#include <gtest/gtest.h>

#include <sstream>
#include <tuple>

using namespace strobe;
using namespace strobe::looptrace_test;

namespace {

// "A:0 A:7 B:4" as in the spec's listing.
PartialSequence parse(const std::string &text) {
  PartialSequence sequence;
  std::istringstream in(text);
  std::string token;
  while (in >> token)
    sequence.push_back(element(static_cast<uint32_t>(token[0] - 'A' + 1),
                               static_cast<uint32_t>(std::stoul(token.substr(2)))));
  return sequence;
}

// The spec's P-1 ... P-7 (first sample on the first instruction of the first call).
std::vector<PartialSequence> specSequences() {
  return {parse("A:0 A:7 B:4 B:1 B:8 B:5 C:2 C:9"), parse("A:6 B:3 B:0 B:7 B:4 C:1 C:8"),
          parse("A:5 B:2 B:9 B:6 B:3 C:0 C:7"),     parse("A:4 B:1 B:8 B:5 B:2 B:9 C:6"),
          parse("A:3 B:0 B:7 B:4 B:1 B:8 C:5"),     parse("A:2 A:9 B:6 B:3 B:0 B:7 C:4"),
          parse("A:1 A:8 B:5 B:2 B:9 B:6 C:3")};
}

int64_t similarity(const PartialSequence &x, const PartialSequence &y) {
  ScoreTables tables = ScoreTables::countMode();
  return sequenceSimilarity(x, y, Scorer(tables)).total;
}

int64_t likelihood(const PartialSequence &sequence) {
  ScoreTables tables = ScoreTables::countMode();
  return sequenceLikelihood(sequence, Scorer(tables));
}

// Both tables ignore the block fields in Keying::Ordinal, so the spec's listing equals our sampler.
bool sameInstructions(const PartialSequence &x, const PartialSequence &y) {
  return pcsOf(x) == pcsOf(y);
}

} // namespace

TEST(LoopTraceGolden, OurSamplerReproducesTheSpecsPartialSequences) {
  std::vector<PartialSequence> sampled = sampleStream(funcMBody(), 7, 0, 7);
  std::vector<PartialSequence> spec = specSequences();
  ASSERT_EQ(sampled.size(), spec.size());
  for (size_t i = 0; i < spec.size(); ++i)
    EXPECT_TRUE(sameInstructions(sampled[i], spec[i])) << "P-" << i + 1;
}

TEST(LoopTraceGolden, IdenticalSequencesAreNotTheBestPair) {
  PartialSequence a = parse("A:0 A:7"), b = parse("A:0 A:7"), c = parse("A:1 A:8");
  // By hand: A-C = 2 x (10 + 10), A-B = 2 x (10 + 0).
  EXPECT_EQ(similarity(a, c), 40);
  EXPECT_EQ(similarity(a, b), 20);
  EXPECT_GT(similarity(a, c), similarity(a, b));
}

TEST(LoopTraceGolden, SimilarityMatrixOfTheWorkedExample) {
  std::vector<PartialSequence> p = specSequences();
  auto sim = [&p](int i, int j) { return similarity(p[i - 1], p[j - 1]); };
  EXPECT_EQ(sim(1, 7), 140);
  EXPECT_EQ(sim(4, 5), 140);
  EXPECT_EQ(sim(2, 3), 130);
  EXPECT_EQ(sim(6, 7), 130);
  EXPECT_EQ(sim(3, 4), 120);
  EXPECT_EQ(sim(5, 6), 120);
  EXPECT_EQ(sim(4, 5), sim(5, 4));
}

TEST(LoopTraceGolden, MostSimilarPairsAreP4P5AndP1P7) {
  std::vector<PartialSequence> p = specSequences();
  std::vector<std::pair<int, int>> best;
  int64_t highest = 0;
  for (int i = 0; i < 7; ++i)
    for (int j = i + 1; j < 7; ++j) {
      int64_t value = similarity(p[i], p[j]);
      if (value > highest)
        best.clear();
      if (value >= highest) {
        highest = value;
        best.emplace_back(i + 1, j + 1);
      }
    }
  EXPECT_EQ(highest, 140);
  EXPECT_EQ(best, (std::vector<std::pair<int, int>>{{1, 7}, {4, 5}}));
}

TEST(LoopTraceGolden, P54IsMoreLikelyThanP45) {
  std::vector<PartialSequence> p = specSequences();
  PartialSequence p54 = roundRobin({4, 3}, p);
  PartialSequence p45 = roundRobin({3, 4}, p);
  EXPECT_TRUE(sameInstructions(p54, parse("A:3 A:4 B:0 B:1 B:7 B:8 B:4 B:5 B:1 B:2 B:8 B:9 "
                                          "C:5 C:6")));
  // By hand: P-5-4 has seven +1 steps (20 each), four same-function steps of +6 or -4 (10 each)
  // and two function changes (0) = 180; P-4-5 has eleven same-function steps of -2, -1 or +8
  // (10 each) and two function changes = 110.
  EXPECT_EQ(likelihood(p54), 180);
  EXPECT_EQ(likelihood(p45), 110);

  ScoreTables tables = ScoreTables::countMode();
  Scorer scorer(tables);
  for (LikelihoodForm form : {LikelihoodForm::RoundRobin, LikelihoodForm::Pairwise}) {
    MergedOrder merged = mergeExhaustive({3}, {4}, p, scorer, form, 100);
    EXPECT_EQ(merged.order, (Order{4, 3}));
  }
  EXPECT_EQ(mergeDynamic({3}, {4}, p, scorer).order, (Order{4, 3}));
}

TEST(LoopTraceGolden, MergingWithAMergedGroupKeepsItsOrder) {
  std::vector<PartialSequence> p = specSequences();
  ScoreTables tables = ScoreTables::countMode();
  Scorer scorer(tables);
  // P-7 with P-5-4: P-7-5-4, P-5-7-4, P-5-4-7 and nothing with P-4 before P-5.
  EXPECT_EQ(patternCount(3, 1), 3u);
  // The truth runs P-1, P-7, P-6, P-5, P-4, P-3, P-2, so of those three P-7-5-4 is its order.
  Order expected{6, 4, 3};
  EXPECT_EQ(mergeExhaustive({6}, {4, 3}, p, scorer, LikelihoodForm::RoundRobin, 100).order,
            expected);
  EXPECT_EQ(mergeExhaustive({6}, {4, 3}, p, scorer, LikelihoodForm::Pairwise, 100).order, expected);
  EXPECT_EQ(mergeDynamic({6}, {4, 3}, p, scorer).order, expected);
}

TEST(LoopTraceGolden, LiteralSearchRefusesTooManyPatterns) {
  std::vector<PartialSequence> p = specSequences();
  ScoreTables tables = ScoreTables::countMode();
  // C(7, 3) = 35 patterns.
  EXPECT_THROW(
      mergeExhaustive({0, 1, 2}, {3, 4, 5, 6}, p, Scorer(tables), LikelihoodForm::RoundRobin, 34),
      LoopTraceError);
  EXPECT_NO_THROW(
      mergeExhaustive({0, 1, 2}, {3, 4, 5, 6}, p, Scorer(tables), LikelihoodForm::RoundRobin, 35));
}

// Every sampling phase, both embodiments, both forms, the most similar pair or the best of the
// three most similar (S108's variant): the merge must give back func_M exactly.
class LoopTraceGoldenMerge
    : public ::testing::TestWithParam<std::tuple<size_t, Keying, PatternSearch, size_t>> {};

TEST_P(LoopTraceGoldenMerge, ReproducesTheFiftyInstructionTruth) {
  auto [phase, keying, search, topPairs] = GetParam();
  std::vector<Element> truth = funcMBody();
  ASSERT_EQ(truth.size(), 50u);
  ScoreTables tables =
      keying == Keying::Block ? ScoreTables::basicBlockMode() : ScoreTables::countMode();
  ReconstructOptions options = search == PatternSearch::Exhaustive
                                   ? ReconstructOptions::literal(tables, SamplingKind::Count)
                                   : ReconstructOptions::efficient(tables, SamplingKind::Count);
  options.topPairs = topPairs;
  std::vector<PartialSequence> sequences = sampleStream(truth, 7, phase, 7);

  LoopTrace result = reconstructLoopTrace(sequences, options);

  EXPECT_EQ(tracePcs(result.trace), pcsOf(truth));
  for (const WeightedElement &entry : result.trace)
    EXPECT_EQ(entry.weight, 1u);
  EXPECT_EQ(result.diagnostics.iterations, 7u);
  EXPECT_EQ(result.diagnostics.mergeSteps, 6u);
  EXPECT_TRUE(result.diagnostics.contradictions.empty());
  if (phase == 0) { // the spec's ground truth: round robin in the order P-1, P-7, P-6, ..., P-2
    EXPECT_EQ(result.order, (std::vector<size_t>{0, 6, 5, 4, 3, 2, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(LoopTrace, LoopTraceGoldenMerge,
                         ::testing::Combine(::testing::Range<size_t>(0, 7),
                                            ::testing::Values(Keying::Ordinal, Keying::Block),
                                            ::testing::Values(PatternSearch::DynamicProgramming,
                                                              PatternSearch::Exhaustive),
                                            ::testing::Values(size_t{1}, size_t{3})));
