// `strobe loop --split auto`'s probe: how long an iteration runs, told apart from the cost of the
// marker's own stops, and whether the marker is kept.
#include "capture/LoopProbe.h"

#include <gtest/gtest.h>

namespace strobe {
namespace {

// Hits of a loop whose iterations run `iterationNs` on the CPU, each marker stop costing `stopNs`.
std::vector<ProbeHit> hitsOf(uint64_t iterationNs, uint64_t stopNs, size_t count, bool cpuKnown) {
  std::vector<ProbeHit> hits;
  for (uint64_t i = 0; i < count; ++i)
    hits.push_back({1'000'000 + i * (iterationNs + stopNs),
                    cpuKnown ? std::optional<uint64_t>(5'000 + i * iterationNs) : std::nullopt});
  return hits;
}

TEST(LoopProbe, IterationTimeLeavesTheMarkerStopsOut) {
  std::optional<ProbeEstimate> estimate = estimateIteration(hitsOf(40, 2'300'000, 17, true));
  ASSERT_TRUE(estimate);
  EXPECT_EQ(estimate->iterationNs, 40u);
  EXPECT_EQ(estimate->stopNs, 2'300'000u);
}

TEST(LoopProbe, WallTimeWhenTheThreadsCpuTimeIsUnknown) {
  std::optional<ProbeEstimate> estimate = estimateIteration(hitsOf(40, 2'300'000, 17, false));
  ASSERT_TRUE(estimate);
  EXPECT_EQ(estimate->iterationNs, 2'300'040u);
  EXPECT_EQ(estimate->stopNs, 0u);
}

TEST(LoopProbe, OneHitTellsNothing) {
  EXPECT_FALSE(estimateIteration({}));
  EXPECT_FALSE(estimateIteration(hitsOf(40, 100, 1, true)));
}

TEST(LoopProbe, TheMedianIgnoresAnOddIteration) {
  std::vector<ProbeHit> hits = hitsOf(1'000, 0, 5, true);
  for (size_t i = 3; i < hits.size(); ++i) // the third iteration waited 1 s on a lock
    *hits[i].cpuNs += 1'000'000'000, hits[i].wallNs += 1'000'000'000;
  EXPECT_EQ(estimateIteration(hits)->iterationNs, 1'000u);
}

// The failure this guards against: slow stops (2.3 ms) made a 40 ns iteration look 2.3 ms long,
// longer than four periods the budget had not yet stretched (1 ms at 997 Hz), and kept the marker.
TEST(LoopProbe, ShortIterationsDropTheMarkerHoweverSlowTheStops) {
  EXPECT_FALSE(markerPays(*estimateIteration(hitsOf(40, 2'300'000, 17, true)), 1'003'009, 0.04));
  EXPECT_FALSE(markerPays(*estimateIteration(hitsOf(40, 90'000, 17, true)), 1'003'009, 0.04));
}

TEST(LoopProbe, LongIterationsKeepTheMarker) {
  // 20 ms iterations, 90 µs stops: the budget paces a 2.25 ms period, 4 periods are 9 ms.
  EXPECT_TRUE(
      markerPays(*estimateIteration(hitsOf(20'000'000, 90'000, 17, true)), 1'003'009, 0.04));
}

TEST(LoopProbe, SlowStopsLengthenThePeriodTheIterationIsComparedWith) {
  // The same 20 ms iterations with 2.3 ms stops: a 57.5 ms period, so the marker would cost more
  // than the budget allows.
  ProbeEstimate slow = *estimateIteration(hitsOf(20'000'000, 2'300'000, 17, true));
  EXPECT_FALSE(markerPays(slow, 1'003'009, 0.04));
  EXPECT_TRUE(markerPays(slow, 1'003'009, 1.0)); // --overhead 100: 2.3 ms periods, 9.2 ms
  // A period the timer has already stretched counts as it is.
  EXPECT_FALSE(markerPays(*estimateIteration(hitsOf(20'000'000, 0, 17, true)), 6'000'000, 1.0));
}

} // namespace
} // namespace strobe
