// The score tables and what annotation beyond the spec (calling context, CFG edges) adds.
#include "LoopTraceTest.h"
#include "analysis/looptrace/EditDistance.h"
#include "analysis/looptrace/Reconstruct.h"
#include "analysis/looptrace/Scorer.h"

#include <gtest/gtest.h>

using namespace strobe;
using namespace strobe::looptrace_test;

namespace {

Element inContext(uint32_t function, uint32_t ordinal, uint32_t callSite) {
  Element e = element(function, ordinal);
  e.context = CallingContext{kFuncM, callSite};
  return e;
}

Element inBlock(uint32_t function, uint32_t block, uint32_t offset) {
  Element e = element(function, 0);
  e.block = block;
  e.blockOffset = offset;
  return e;
}

} // namespace

TEST(LoopTraceScorer, CountModeTablesAreTheSpecs) {
  ScoreTables tables = ScoreTables::countMode();
  Scorer scorer(tables);
  // Similarity: name match 10 plus |Δ| = 1 -> 10, 2 -> 6, 3 -> 3, else 0; mismatch 0.
  EXPECT_EQ(scorer.similarity(element(1, 4), element(1, 5)), 20);
  EXPECT_EQ(scorer.similarity(element(1, 6), element(1, 4)), 16);
  EXPECT_EQ(scorer.similarity(element(1, 1), element(1, 4)), 13);
  EXPECT_EQ(scorer.similarity(element(1, 0), element(1, 4)), 10);
  EXPECT_EQ(scorer.similarity(element(1, 4), element(1, 4)), 10);
  EXPECT_EQ(scorer.similarity(element(1, 4), element(2, 5)), 0);
  // Likelihood: signed Δ, ascending only.
  EXPECT_EQ(scorer.likelihood(element(1, 4), element(1, 5)), 20);
  EXPECT_EQ(scorer.likelihood(element(1, 4), element(1, 6)), 16);
  EXPECT_EQ(scorer.likelihood(element(1, 4), element(1, 7)), 13);
  EXPECT_EQ(scorer.likelihood(element(1, 4), element(1, 8)), 10);
  EXPECT_EQ(scorer.likelihood(element(1, 5), element(1, 4)), 10);
  EXPECT_EQ(scorer.likelihood(element(1, 4), element(1, 4)), 10);
}

TEST(LoopTraceScorer, TimeModePeaksAtTheSameInstruction) {
  ScoreTables tables = ScoreTables::timeMode();
  Scorer scorer(tables);
  EXPECT_GT(scorer.similarity(element(1, 4), element(1, 4)),
            scorer.similarity(element(1, 4), element(1, 5)));
  EXPECT_GT(scorer.likelihood(element(1, 4), element(1, 4)),
            scorer.likelihood(element(1, 4), element(1, 5)));
  EXPECT_GT(scorer.likelihood(element(1, 4), element(1, 5)),
            scorer.likelihood(element(1, 5), element(1, 4)));
}

TEST(LoopTraceScorer, BasicBlockModeScoresBlocksThenOffsets) {
  ScoreTables tables = ScoreTables::basicBlockMode();
  Scorer plain(tables);
  // Same block, offsets 1 apart: 5 + 5 + 10. Next block: 5 + 3. Two blocks on: 5.
  EXPECT_EQ(plain.likelihood(inBlock(1, 2, 0), inBlock(1, 2, 1)), 20);
  EXPECT_EQ(plain.likelihood(inBlock(1, 2, 2), inBlock(1, 3, 0)), 8);
  EXPECT_EQ(plain.likelihood(inBlock(1, 1, 3), inBlock(1, 3, 0)), 5);
  EXPECT_EQ(plain.similarity(inBlock(1, 2, 0), inBlock(1, 2, 1)), 20);
  EXPECT_EQ(plain.similarity(inBlock(1, 3, 0), inBlock(1, 2, 1)), 7);

  // A real edge BB1 -> BB3 (a jump over BB2) earns the CFG bonus of 3; so does a back edge.
  ControlFlowEdges edges;
  edges.add(1, 1, 3);
  edges.add(1, 2, 2);
  Scorer withEdges(tables, &edges);
  EXPECT_EQ(withEdges.likelihood(inBlock(1, 1, 3), inBlock(1, 3, 0)), 8);
  EXPECT_EQ(withEdges.likelihood(inBlock(1, 2, 2), inBlock(1, 2, 0)), 13);
  EXPECT_EQ(withEdges.likelihood(inBlock(1, 2, 0), inBlock(1, 2, 1)), 20);
  EXPECT_EQ(withEdges.likelihood(inBlock(2, 1, 3), inBlock(2, 3, 0)), 5);
}

TEST(LoopTraceScorer, CallingContextTellsCallsApartAndOrdersThem) {
  ScoreTables pureTables = ScoreTables::countMode();
  ScoreTables contextTables = ScoreTables::countMode();
  contextTables.useCallingContext = true;
  Scorer pure(pureTables), context(contextTables);
  Element firstCall = inContext(kFuncB, 4, 3), secondCall = inContext(kFuncB, 5, 5);
  EXPECT_EQ(pure.similarity(firstCall, secondCall), 20);
  EXPECT_EQ(context.similarity(firstCall, secondCall), 0);
  EXPECT_EQ(pure.likelihood(firstCall, secondCall), 20);
  EXPECT_EQ(context.likelihood(firstCall, secondCall), 5); // a later sibling call
  EXPECT_EQ(context.likelihood(secondCall, firstCall), 0); // an earlier one
  // func_M:2 calls at its ordinal 3: entering the callee is ordered, and so is returning past it.
  EXPECT_EQ(context.likelihood(element(kFuncM, 2), firstCall), 5);
  EXPECT_EQ(context.likelihood(element(kFuncM, 4), firstCall), 0);
  EXPECT_EQ(context.likelihood(firstCall, element(kFuncM, 4)), 5);
  EXPECT_EQ(context.likelihood(firstCall, element(kFuncM, 2)), 0);
  EXPECT_EQ(pure.likelihood(element(kFuncM, 2), firstCall), 0);
}

// func_M calls a 5-instruction func_B three times; sampled every 7th instruction, consecutive
// samples of a phase fall in different calls, where function and offset alone mislead.
TEST(LoopTraceScorer, CallingContextRecoversRepeatedShortCalls) {
  std::vector<Element> body = makeBody(
      {{kFuncA, {6}, 1}, {kFuncB, {5}, 3}, {kFuncB, {5}, 5}, {kFuncB, {5}, 7}, {kFuncC, {6}, 9}});
  std::vector<PartialSequence> sequences;
  for (size_t phase = 0; phase < 7; ++phase)
    sequences.push_back(sampleAt(body, 7, phase));
  ScoreTables tables = ScoreTables::countMode();
  tables.useCallingContext = true;
  LoopTrace result =
      reconstructLoopTrace(sequences, ReconstructOptions::efficient(tables, SamplingKind::Count));
  EXPECT_EQ(tracePcs(result.trace), pcsOf(body));
  std::vector<CallingContext> contexts;
  for (const WeightedElement &entry : result.trace)
    if (entry.element.context && (contexts.empty() || contexts.back() != *entry.element.context))
      contexts.push_back(*entry.element.context);
  EXPECT_EQ(contexts, (std::vector<CallingContext>{
                          {kFuncM, 1}, {kFuncM, 3}, {kFuncM, 5}, {kFuncM, 7}, {kFuncM, 9}}));
}
