#include "analysis/looptrace/Split.h"

namespace strobe {

static void requireTimeOrder(std::span<const LoopSample> samples) {
  for (size_t i = 1; i < samples.size(); ++i)
    if (samples[i].time < samples[i - 1].time)
      throw LoopTraceError("loop samples must be in time order");
}

Split splitByIteration(std::span<const LoopSample> samples, SplitMethod method) {
  if (method == SplitMethod::Count)
    throw LoopTraceError("a count split needs the instructions per iteration and the interval");
  requireTimeOrder(samples);
  Split split{method, {}, 0};
  std::optional<uint64_t> current;
  for (const LoopSample &sample : samples) {
    if (!sample.iteration) {
      ++split.droppedSamples;
      continue;
    }
    if (sample.iteration != current) {
      split.iterations.emplace_back();
      current = sample.iteration;
    }
    split.iterations.back().push_back(sample.element);
  }
  auto dropRun = [&split](auto run) {
    split.droppedSamples += run->size();
    split.iterations.erase(run);
  };
  if (!split.iterations.empty())
    dropRun(split.iterations.end() - 1);
  if (method == SplitMethod::Expression && !split.iterations.empty())
    dropRun(split.iterations.begin());
  return split;
}

Split splitByCount(std::span<const LoopSample> samples, uint64_t instructionsPerIteration,
                   uint64_t interval, uint64_t firstOffset) {
  if (instructionsPerIteration == 0 || interval == 0)
    throw LoopTraceError("a count split needs instructions per iteration and an interval above 0");
  requireTimeOrder(samples);
  Split split{SplitMethod::Count, {}, 0};
  for (size_t j = 0; j < samples.size(); ++j) {
    uint64_t iteration = (firstOffset + j * interval) / instructionsPerIteration;
    if (split.iterations.size() <= iteration)
      split.iterations.resize(iteration + 1);
    split.iterations[iteration].push_back(samples[j].element);
  }
  return split;
}

} // namespace strobe
