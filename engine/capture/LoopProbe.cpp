#include "capture/LoopProbe.h"

#include <algorithm>

namespace strobe {
namespace {

uint64_t median(std::vector<uint64_t> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

} // namespace

std::optional<ProbeEstimate> estimateIteration(const std::vector<ProbeHit> &hits) {
  if (hits.size() < 2)
    return std::nullopt;
  bool cpuKnown = std::all_of(hits.begin(), hits.end(), [](const ProbeHit &h) { return h.cpuNs; });
  std::vector<uint64_t> iterations, stops;
  for (size_t i = 1; i < hits.size(); ++i) {
    uint64_t wall = hits[i].wallNs - hits[i - 1].wallNs;
    if (!cpuKnown) {
      iterations.push_back(wall);
      continue;
    }
    uint64_t cpu = *hits[i].cpuNs - *hits[i - 1].cpuNs;
    iterations.push_back(cpu);
    stops.push_back(wall > cpu ? wall - cpu : 0);
  }
  return ProbeEstimate{median(iterations), stops.empty() ? 0 : median(stops)};
}

bool markerPays(const ProbeEstimate &estimate, uint64_t pacedPeriodNs, double maxSlowdown) {
  uint64_t period = pacedPeriodNs;
  if (maxSlowdown > 0)
    period = std::max(period, static_cast<uint64_t>(estimate.stopNs / maxSlowdown));
  return estimate.iterationNs >= kMarkerMinimumPeriods * period;
}

} // namespace strobe
