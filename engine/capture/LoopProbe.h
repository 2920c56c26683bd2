// What `strobe loop --split auto` learns from its short pass with a marker at the loop head: how
// long one iteration runs, and whether a trap per iteration is worth its cost.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace strobe {

// The loop's thread reaching the marker: when, and how long it had run on a CPU by then (nullopt
// when /proc does not say).
struct ProbeHit {
  uint64_t wallNs = 0;
  std::optional<uint64_t> cpuNs;
};

struct ProbeEstimate {
  uint64_t iterationNs = 0; // median, without the marker's own stop when the CPU time is known
  uint64_t stopNs = 0;      // median cost of one marker stop to the inferior (0: unknown)
};

// nullopt with fewer than two hits. CPU time is used when every hit has it: wall time between hits
// includes each trap, which on a slow debugger lasts orders of magnitude longer than a short
// iteration and would make the shortest loop look long.
std::optional<ProbeEstimate> estimateIteration(const std::vector<ProbeHit> &hits);

// Keep the marker only for iterations at least this many sampling periods long. Shorter ones give
// partial sequences of a sample or two (little order to merge) while the trap per iteration costs
// the most. The period is the one the slowdown budget will pace: the one asked for, or longer when
// a stop (a marker stop costs about what a sample stop does) takes more than the budget's share of
// it. A marker kept then adds at most a quarter of the samples' slowdown.
constexpr uint64_t kMarkerMinimumPeriods = 4;
bool markerPays(const ProbeEstimate &estimate, uint64_t pacedPeriodNs, double maxSlowdown);

} // namespace strobe
