// What the reconstruction reports beside the trace: counts, coverage, likelihood per step,
// partial sequences that contradict the result, duplicated phases and accuracy against a truth.
#include "LoopTraceTest.h"
#include "analysis/looptrace/EditDistance.h"
#include "analysis/looptrace/Reconstruct.h"

#include <gtest/gtest.h>

#include <set>

using namespace strobe;
using namespace strobe::looptrace_test;

namespace {

ReconstructOptions countOptions() {
  return ReconstructOptions::efficient(ScoreTables::countMode(), SamplingKind::Count);
}

std::vector<uint64_t> distinctPcs(const std::vector<Element> &body) {
  std::set<uint64_t> pcs;
  for (const Element &e : body)
    pcs.insert(e.pc);
  return {pcs.begin(), pcs.end()};
}

} // namespace

TEST(LoopTraceDiagnostics, CountsAndCoverageOfTheWorkedExample) {
  std::vector<Element> body = funcMBody();
  ReconstructOptions options = countOptions();
  options.loopInstructions = distinctPcs(body); // func_A, func_B and func_C: 30 instructions
  ASSERT_EQ(options.loopInstructions.size(), 30u);

  LoopTrace all = reconstructLoopTrace(sampleStream(body, 7, 0, 7), options);
  EXPECT_EQ(all.diagnostics.iterations, 7u);
  EXPECT_EQ(all.diagnostics.distinctSequences, 7u);
  EXPECT_EQ(all.diagnostics.samples, 50u);
  EXPECT_EQ(all.diagnostics.coverage, 1.0);

  // P-1 alone: A:0 A:7 B:4 B:1 B:8 B:5 C:2 C:9 are 8 of the 30.
  std::vector<PartialSequence> first = {sampleStream(body, 7, 0, 7)[0]};
  LoopTrace one = reconstructLoopTrace(first, options);
  EXPECT_EQ(one.diagnostics.coverage, 8.0 / 30.0);
  EXPECT_EQ(one.diagnostics.mergeSteps, 0u);
  EXPECT_EQ(tracePcs(one.trace), pcsOf(first[0]));

  EXPECT_FALSE(reconstructLoopTrace(first, countOptions()).diagnostics.coverage.has_value());
}

TEST(LoopTraceDiagnostics, MeanLikelihoodPerStep) {
  // F0 F2 F4 with F1 F3 F5 merge into F0 ... F5: five +1 steps worth 10 + 10 each.
  std::vector<PartialSequence> sequences = {{element(1, 0), element(1, 2), element(1, 4)},
                                            {element(1, 1), element(1, 3), element(1, 5)}};
  LoopTrace result = reconstructLoopTrace(sequences, countOptions());
  EXPECT_EQ(result.diagnostics.mergeSteps, 1u);
  EXPECT_DOUBLE_EQ(result.diagnostics.meanStepLikelihood, 20.0);
}

TEST(LoopTraceDiagnostics, NothingToMerge) {
  std::vector<PartialSequence> sequences = {{}, {}};
  LoopTrace result = reconstructLoopTrace(sequences, countOptions());
  EXPECT_TRUE(result.trace.empty());
  EXPECT_EQ(result.diagnostics.iterations, 0u);
}

TEST(LoopTraceDiagnostics, DuplicatedPhasesDoNotDuplicateInstructionsInCountMode) {
  std::vector<Element> body = funcMBody();
  // 14 executions sampled every 7th instruction: every phase twice.
  LoopTrace result = reconstructLoopTrace(sampleStream(body, 7, 3, 14), countOptions());
  EXPECT_EQ(result.diagnostics.iterations, 14u);
  EXPECT_EQ(result.diagnostics.samples, 100u);
  EXPECT_EQ(result.diagnostics.distinctSequences, 7u);
  EXPECT_EQ(tracePcs(result.trace), pcsOf(body));
}

TEST(LoopTraceDiagnostics, TimeModeKeepsEveryRepeatAsWeight) {
  std::vector<Element> body = makeBody({{kFuncA, {6}}, {kFuncB, {6}}});
  std::vector<uint32_t> costs = {1, 3, 1, 2, 1, 1, 2, 1, 1, 4, 1, 1};
  std::vector<Element> timeline = expandByCost(body, costs);
  std::vector<PartialSequence> sequences;
  for (size_t repeat = 0; repeat < 2; ++repeat) // every time phase sampled twice
    for (size_t phase = 0; phase < 5; ++phase)
      sequences.push_back(sampleAt(timeline, 5, phase));
  LoopTrace result = reconstructLoopTrace(
      sequences, ReconstructOptions::efficient(ScoreTables::timeMode(), SamplingKind::Time));
  EXPECT_EQ(result.diagnostics.distinctSequences, 10u);
  EXPECT_EQ(tracePcs(result.trace), pcsOf(body));
  ASSERT_EQ(result.trace.size(), costs.size());
  for (size_t i = 0; i < costs.size(); ++i)
    EXPECT_EQ(result.trace[i].weight, 2 * costs[i]) << "instruction " << i;
}

// An execution that took another path: it called func_B twice instead of three times (or ran
// func_C before func_B). Its samples cannot sit anywhere in the trace without breaking the order
// of their neighbours; the seven reproducible ones fit.
TEST(LoopTraceDiagnostics, FlagsAPartialSequenceFromAnotherPath) {
  std::vector<Element> truth = funcMBody();
  std::vector<std::vector<Element>> deviations = {
      makeBody({{kFuncA, {10}}, {kFuncB, {10}}, {kFuncB, {10}}, {kFuncC, {10}}}),
      makeBody({{kFuncA, {10}}, {kFuncC, {10}}, {kFuncB, {10}}, {kFuncB, {10}}, {kFuncB, {10}}})};
  for (const std::vector<Element> &deviation : deviations)
    for (size_t phase = 0; phase < 7; ++phase) {
      std::vector<PartialSequence> sequences = sampleStream(truth, 7, 0, 7);
      sequences.push_back(sampleAt(deviation, 7, phase));
      LoopTrace result = reconstructLoopTrace(sequences, countOptions());
      ASSERT_EQ(result.diagnostics.contradictions.size(), 1u) << "phase " << phase;
      EXPECT_EQ(result.diagnostics.contradictions[0].iterations, (std::vector<size_t>{7}));
      EXPECT_GT(result.diagnostics.contradictions[0].misplacedSamples, 0u);
    }
}

TEST(LoopTraceDiagnostics, AccuracyIsOneMinusNormalisedEditDistance) {
  // kitten -> sitting: two substitutions and one insertion.
  std::vector<uint64_t> kitten = {'k', 'i', 't', 't', 'e', 'n'};
  std::vector<uint64_t> sitting = {'s', 'i', 't', 't', 'i', 'n', 'g'};
  EXPECT_EQ(editDistance(kitten, sitting), 3u);
  EXPECT_EQ(editDistance(sitting, kitten), 3u);
  EXPECT_EQ(editDistance(kitten, {}), 6u);
  EXPECT_DOUBLE_EQ(traceAccuracy(kitten, sitting), 1.0 - 3.0 / 7.0);
  EXPECT_DOUBLE_EQ(traceAccuracy(kitten, kitten), 1.0);
  EXPECT_DOUBLE_EQ(traceAccuracy({}, {}), 1.0);

  std::vector<Element> body = funcMBody();
  std::vector<PartialSequence> sequences = sampleStream(body, 7, 0, 7);
  sequences.erase(sequences.begin() + 2); // without P-3 seven instructions are never sampled
  LoopTrace result = reconstructLoopTrace(sequences, countOptions());
  EXPECT_EQ(result.trace.size(), 43u);
  EXPECT_DOUBLE_EQ(traceAccuracy(tracePcs(result.trace), pcsOf(body)), 1.0 - 7.0 / 50.0);
}

TEST(LoopTraceDiagnostics, RefusesWhatItCannotDo) {
  std::vector<PartialSequence> sequences = {
      {element(1, 0)}, {element(1, 1)}, {element(1, 2)}, {element(1, 1)}};
  ReconstructOptions options = countOptions();
  options.sequenceLimit = 2;
  EXPECT_THROW(reconstructLoopTrace(sequences, options), LoopTraceError); // three distinct
  options.sequenceLimit = 3;
  EXPECT_NO_THROW(reconstructLoopTrace(sequences, options));

  ReconstructOptions mixed = countOptions();
  mixed.likelihood = LikelihoodForm::RoundRobin; // the dynamic program needs the pairwise form
  EXPECT_THROW(reconstructLoopTrace(sequences, mixed), LoopTraceError);
  ReconstructOptions none = countOptions();
  none.topPairs = 0;
  EXPECT_THROW(reconstructLoopTrace(sequences, none), LoopTraceError);
}
