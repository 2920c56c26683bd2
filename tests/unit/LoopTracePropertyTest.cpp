// Random loop bodies sampled at random intervals and phases: whenever the samples cover every
// instruction (every phase was sampled), the reconstruction must equal the body exactly; and the
// literal and efficient searches must pick the same pattern wherever both run.
#include "LoopTraceTest.h"
#include "analysis/looptrace/EditDistance.h"
#include "analysis/looptrace/Merge.h"
#include "analysis/looptrace/Reconstruct.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace strobe;
using namespace strobe::looptrace_test;

namespace {

using Random = std::mt19937;

size_t uniform(Random &random, size_t low, size_t high) {
  return std::uniform_int_distribution<size_t>(low, high)(random);
}

struct Workload {
  std::vector<Element> body;
  size_t shortestCall = 0; // instructions in the shortest call
};

// Cuts a function of `length` instructions into one to three basic blocks.
std::vector<uint32_t> randomBlocks(Random &random, size_t length) {
  std::vector<uint32_t> blocks;
  size_t left = length;
  for (size_t cuts = uniform(random, 0, 2); cuts > 0 && left > 1; --cuts) {
    size_t block = uniform(random, 1, left - 1);
    blocks.push_back(static_cast<uint32_t>(block));
    left -= block;
  }
  blocks.push_back(static_cast<uint32_t>(left));
  return blocks;
}

// One to four functions of 3..14 instructions called one to five times; or one straight function.
Workload randomBody(Random &random, bool straightLine) {
  if (straightLine) {
    size_t length = uniform(random, 5, 60);
    return {makeBody({{1, randomBlocks(random, length)}}), length};
  }
  std::vector<std::vector<uint32_t>> functions(uniform(random, 1, 4));
  for (std::vector<uint32_t> &blocks : functions)
    blocks = randomBlocks(random, uniform(random, 3, 14));
  std::vector<Call> calls;
  Workload workload;
  workload.shortestCall = SIZE_MAX;
  for (size_t n = uniform(random, 1, 5); n > 0; --n) {
    uint32_t function = static_cast<uint32_t>(uniform(random, 1, functions.size()));
    calls.push_back({function, functions[function - 1]});
    size_t length =
        std::accumulate(functions[function - 1].begin(), functions[function - 1].end(), size_t{0});
    workload.shortestCall = std::min(workload.shortestCall, length);
  }
  workload.body = makeBody(calls);
  return workload;
}

// The method tells calls of one function apart only by offsets, so the interval must be shorter
// than a call (with a longer interval two calls of the same function look alike).
size_t randomInterval(Random &random, const Workload &workload) {
  return uniform(random, 2, std::min<size_t>(12, std::max<size_t>(2, workload.shortestCall - 1)));
}

// Every phase once, in random order, plus `extra` repeated phases.
std::vector<size_t> randomPhases(Random &random, size_t interval, size_t extra) {
  std::vector<size_t> phases(interval);
  std::iota(phases.begin(), phases.end(), size_t{0});
  for (size_t i = 0; i < extra; ++i)
    phases.push_back(uniform(random, 0, interval - 1));
  std::shuffle(phases.begin(), phases.end(), random);
  return phases;
}

std::vector<uint64_t> weightedPcs(const std::vector<WeightedElement> &trace) {
  std::vector<uint64_t> pcs;
  for (const WeightedElement &entry : trace)
    pcs.insert(pcs.end(), entry.weight, entry.element.pc);
  return pcs;
}

void expectTruthInCountMode(bool straightLine, const ScoreTables &tables, unsigned seed) {
  Random random(seed);
  for (int round = 0; round < 150; ++round) {
    Workload workload = randomBody(random, straightLine);
    size_t interval = randomInterval(random, workload);
    std::vector<PartialSequence> sequences;
    for (size_t phase : randomPhases(random, interval, uniform(random, 0, interval)))
      sequences.push_back(sampleAt(workload.body, interval, phase));
    LoopTrace result =
        reconstructLoopTrace(sequences, ReconstructOptions::efficient(tables, SamplingKind::Count));
    ASSERT_EQ(tracePcs(result.trace), pcsOf(workload.body))
        << "round " << round << " interval " << interval << " body " << describe(workload.body);
  }
}

} // namespace

TEST(LoopTraceProperty, StraightLineBodiesInCountMode) {
  expectTruthInCountMode(true, ScoreTables::countMode(), 11);
  expectTruthInCountMode(true, ScoreTables::basicBlockMode(), 21);
}

TEST(LoopTraceProperty, MultiFunctionBodiesInCountMode) {
  expectTruthInCountMode(false, ScoreTables::countMode(), 12);
  expectTruthInCountMode(false, ScoreTables::basicBlockMode(), 22);
}

// Time-interval sampling: each instruction runs 1..4 time units, every time phase is sampled
// once, and the result must list each instruction with its cost as the weight.
TEST(LoopTraceProperty, TimeModeGivesExecutionTimeWeights) {
  Random random(13);
  for (int round = 0; round < 300; ++round) {
    ScoreTables tables = round % 2 ? ScoreTables::basicBlockTimeMode() : ScoreTables::timeMode();
    Workload workload = randomBody(random, round % 3 == 0);
    std::vector<uint32_t> costs(workload.body.size());
    for (uint32_t &cost : costs)
      cost = static_cast<uint32_t>(uniform(random, 1, 4));
    std::vector<Element> timeline = expandByCost(workload.body, costs);
    size_t interval = randomInterval(random, workload);
    std::vector<PartialSequence> sequences;
    for (size_t phase : randomPhases(random, interval, 0))
      sequences.push_back(sampleAt(timeline, interval, phase));
    LoopTrace result =
        reconstructLoopTrace(sequences, ReconstructOptions::efficient(tables, SamplingKind::Time));
    ASSERT_EQ(tracePcs(result.trace), pcsOf(workload.body)) << "round " << round;
    ASSERT_EQ(weightedPcs(result.trace), pcsOf(timeline)) << "round " << round;
  }
}

TEST(LoopTraceProperty, LiteralFormReproducesSmallBodies) {
  Random random(14);
  for (int round = 0; round < 60; ++round) {
    Workload workload = randomBody(random, round % 2 == 0);
    size_t interval = std::min<size_t>(randomInterval(random, workload), 6);
    std::vector<PartialSequence> sequences;
    for (size_t phase : randomPhases(random, interval, 1))
      sequences.push_back(sampleAt(workload.body, interval, phase));
    LoopTrace result = reconstructLoopTrace(
        sequences, ReconstructOptions::literal(ScoreTables::countMode(), SamplingKind::Count));
    ASSERT_EQ(tracePcs(result.trace), pcsOf(workload.body)) << "round " << round;
  }
}

namespace {

// Sequences that need not come from any body: the searches must agree on any input.
std::vector<PartialSequence> randomSequences(Random &random, size_t count, bool equalLengths) {
  size_t length = uniform(random, 1, 6);
  std::vector<PartialSequence> sequences(count);
  for (PartialSequence &sequence : sequences) {
    size_t n = equalLengths ? length : uniform(random, 1, 6);
    for (size_t i = 0; i < n; ++i) {
      Element e = element(static_cast<uint32_t>(uniform(random, 1, 2)),
                          static_cast<uint32_t>(uniform(random, 0, 9)));
      e.block = e.ordinal / 4;
      e.blockOffset = e.ordinal % 4;
      sequence.push_back(e);
    }
  }
  return sequences;
}

// Splits a random permutation of `count` originals into two groups.
std::pair<Order, Order> randomGroups(Random &random, size_t count) {
  Order all(count);
  std::iota(all.begin(), all.end(), 0u);
  std::shuffle(all.begin(), all.end(), random);
  size_t cut = uniform(random, 1, count - 1);
  return {Order(all.begin(), all.begin() + cut), Order(all.begin() + cut, all.end())};
}

std::vector<ScoreTables> allTables() {
  return {ScoreTables::countMode(), ScoreTables::timeMode(), ScoreTables::basicBlockMode(),
          ScoreTables::basicBlockTimeMode()};
}

} // namespace

TEST(LoopTraceProperty, DynamicProgramAgreesWithExhaustiveSearch) {
  Random random(15);
  for (const ScoreTables &tables : allTables()) {
    Scorer scorer(tables);
    for (int round = 0; round < 300; ++round) {
      size_t count = uniform(random, 2, 8);
      std::vector<PartialSequence> sequences = randomSequences(random, count, round % 2 == 0);
      auto [x, y] = randomGroups(random, count);
      MergedOrder literal =
          mergeExhaustive(x, y, sequences, scorer, LikelihoodForm::Pairwise, 1000);
      MergedOrder dynamic = mergeDynamic(x, y, sequences, scorer);
      ASSERT_EQ(dynamic.likelihood, literal.likelihood) << "round " << round;
      ASSERT_EQ(dynamic.order, literal.order) << "round " << round;
      ASSERT_EQ(dynamic.likelihood, pairwiseLikelihood(dynamic.order, sequences, scorer));
    }
  }
}

// With one sample per original per round the pairwise likelihood is the literal one, so even the
// fully literal search (round-robin likelihood) picks the dynamic program's pattern.
TEST(LoopTraceProperty, LiteralLikelihoodAgreesWhenLengthsAreEqual) {
  Random random(16);
  for (const ScoreTables &tables : allTables()) {
    Scorer scorer(tables);
    for (int round = 0; round < 300; ++round) {
      size_t count = uniform(random, 2, 7);
      std::vector<PartialSequence> sequences = randomSequences(random, count, true);
      auto [x, y] = randomGroups(random, count);
      MergedOrder literal =
          mergeExhaustive(x, y, sequences, scorer, LikelihoodForm::RoundRobin, 1000);
      MergedOrder dynamic = mergeDynamic(x, y, sequences, scorer);
      ASSERT_EQ(dynamic.order, literal.order) << "round " << round;
      ASSERT_EQ(dynamic.likelihood, literal.likelihood) << "round " << round;
    }
  }
}

// Lengths that differ by at most one and never grow along the order (count-mode phases in their
// true order) keep the decomposition exact.
TEST(LoopTraceProperty, PairwiseLikelihoodIsExactForCountModeLengths) {
  Random random(17);
  ScoreTables tables = ScoreTables::countMode();
  Scorer scorer(tables);
  for (int round = 0; round < 300; ++round) {
    std::vector<PartialSequence> sequences = randomSequences(random, uniform(random, 1, 8), true);
    for (PartialSequence &sequence : sequences)
      if (sequence.size() > 1 && uniform(random, 0, 1) == 1)
        sequence.pop_back();
    Order order(sequences.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return sequences[a].size() > sequences[b].size();
    });
    ASSERT_EQ(pairwiseLikelihood(order, sequences, scorer),
              sequenceLikelihood(roundRobin(order, sequences), scorer))
        << "round " << round;
  }
}

TEST(LoopTraceProperty, ReconstructionAgreesBetweenSearches) {
  Random random(18);
  for (int round = 0; round < 100; ++round) {
    std::vector<PartialSequence> sequences =
        randomSequences(random, uniform(random, 2, 7), round % 2 == 0);
    ReconstructOptions dynamic =
        ReconstructOptions::efficient(ScoreTables::countMode(), SamplingKind::Time);
    dynamic.topPairs = 1 + round % 3;
    ReconstructOptions exhaustive = dynamic;
    exhaustive.search = PatternSearch::Exhaustive;
    LoopTrace a = reconstructLoopTrace(sequences, dynamic);
    LoopTrace b = reconstructLoopTrace(sequences, exhaustive);
    ASSERT_EQ(a.order, b.order) << "round " << round;
    ASSERT_EQ(weightedPcs(a.trace), weightedPcs(b.trace)) << "round " << round;
  }
}
