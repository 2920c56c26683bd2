// Splitting a sample stream into one partial sequence per execution of the loop (spec 000, S102).
#include "LoopTraceTest.h"
#include "analysis/looptrace/Split.h"

#include <gtest/gtest.h>

using namespace strobe;
using namespace strobe::looptrace_test;

namespace {

LoopSample sampleOf(uint32_t ordinal, uint64_t time, std::optional<uint64_t> iteration) {
  return {element(1, ordinal), time, iteration};
}

std::vector<uint32_t> ordinals(const PartialSequence &sequence) {
  std::vector<uint32_t> result;
  for (const Element &e : sequence)
    result.push_back(e.ordinal);
  return result;
}

} // namespace

TEST(LoopTraceSplit, MarkerRunsAreIterationsAndTheLastMayBeCut) {
  std::vector<LoopSample> samples = {sampleOf(7, 1, std::nullopt),
                                     sampleOf(8, 2, std::nullopt),
                                     sampleOf(0, 3, 1),
                                     sampleOf(5, 4, 1),
                                     sampleOf(2, 5, 2),
                                     sampleOf(6, 6, 2),
                                     sampleOf(9, 7, 2),
                                     sampleOf(1, 8, 3)};
  Split split = splitByIteration(samples, SplitMethod::Marker);
  EXPECT_EQ(split.method, SplitMethod::Marker);
  ASSERT_EQ(split.iterations.size(), 2u);
  EXPECT_EQ(ordinals(split.iterations[0]), (std::vector<uint32_t>{0, 5}));
  EXPECT_EQ(ordinals(split.iterations[1]), (std::vector<uint32_t>{2, 6, 9}));
  EXPECT_EQ(split.droppedSamples, 3u); // two before the first marker, one after the last
}

TEST(LoopTraceSplit, ExpressionDropsBothEdgeRuns) {
  std::vector<LoopSample> samples = {sampleOf(4, 1, 5), sampleOf(8, 2, 5), sampleOf(1, 3, 6),
                                     sampleOf(3, 4, 7), sampleOf(6, 5, 7), sampleOf(2, 6, 8)};
  Split split = splitByIteration(samples, SplitMethod::Expression);
  ASSERT_EQ(split.iterations.size(), 2u);
  EXPECT_EQ(ordinals(split.iterations[0]), (std::vector<uint32_t>{1}));
  EXPECT_EQ(ordinals(split.iterations[1]), (std::vector<uint32_t>{3, 6}));
  EXPECT_EQ(split.droppedSamples, 3u);
}

TEST(LoopTraceSplit, RepeatedIdLaterIsANewIteration) {
  // An induction variable that wraps: 1 1 2 1 is three runs, not two iterations.
  std::vector<LoopSample> samples = {sampleOf(0, 1, 1), sampleOf(1, 2, 1), sampleOf(2, 3, 2),
                                     sampleOf(3, 4, 1), sampleOf(4, 5, 9)};
  Split split = splitByIteration(samples, SplitMethod::Marker);
  ASSERT_EQ(split.iterations.size(), 3u);
  EXPECT_EQ(ordinals(split.iterations[2]), (std::vector<uint32_t>{3}));
}

TEST(LoopTraceSplit, RejectsSamplesOutOfTimeOrder) {
  std::vector<LoopSample> samples = {sampleOf(0, 5, 1), sampleOf(1, 4, 1)};
  EXPECT_THROW(splitByIteration(samples, SplitMethod::Marker), LoopTraceError);
  EXPECT_THROW(splitByCount(samples, 10, 3), LoopTraceError);
  EXPECT_THROW(splitByIteration({}, SplitMethod::Count), LoopTraceError);
  EXPECT_THROW(splitByCount({}, 0, 3), LoopTraceError);
}

TEST(LoopTraceSplit, CountSplitOfTheWorkedExample) {
  // Fifty samples, every 7th of 7 x 50 instructions, give the spec's P-1 ... P-7 (T/P = 50/7).
  std::vector<Element> body = funcMBody();
  std::vector<LoopSample> stream;
  for (uint64_t step = 0; step < 350; step += 7)
    stream.push_back({body[step % 50], step, std::nullopt});
  Split split = splitByCount(stream, 50, 7);
  EXPECT_EQ(split.method, SplitMethod::Count);
  std::vector<std::vector<Element>> expected = sampleStream(body, 7, 0, 7);
  ASSERT_EQ(split.iterations.size(), 7u);
  for (size_t i = 0; i < 7; ++i)
    EXPECT_EQ(pcsOf(split.iterations[i]), pcsOf(expected[i])) << "P-" << i + 1;
  EXPECT_EQ(split.iterations[0].size(), 8u);
  EXPECT_EQ(split.iterations[1].size(), 7u);
}

TEST(LoopTraceSplit, CountSplitWithAnOffsetFirstSample) {
  // T = 10, P = 4, first sample on instruction 3: steps 3 7 | 11 15 19 | 23 27 | 31 ...
  std::vector<LoopSample> stream;
  for (uint32_t j = 0; j < 8; ++j)
    stream.push_back(sampleOf(j, j, std::nullopt));
  Split split = splitByCount(stream, 10, 4, 3);
  ASSERT_EQ(split.iterations.size(), 4u);
  EXPECT_EQ(ordinals(split.iterations[0]), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(ordinals(split.iterations[1]), (std::vector<uint32_t>{2, 3, 4}));
  EXPECT_EQ(ordinals(split.iterations[2]), (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(ordinals(split.iterations[3]), (std::vector<uint32_t>{7}));
}
