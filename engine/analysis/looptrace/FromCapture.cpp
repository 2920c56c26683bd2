#include "analysis/looptrace/FromCapture.h"

#include "analysis/looptrace/CaptureAnnotator.h"
#include "analysis/looptrace/CapturePath.h"
#include "analysis/looptrace/EditDistance.h"
#include "analysis/looptrace/Split.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <unordered_set>

namespace strobe {
namespace {

// The target's own instructions, and the return addresses of its calls: a sample whose frame k
// (k >= 1) returns to one of these runs in a callee on behalf of the target.
struct LoopTarget {
  std::vector<uint64_t> instructions; // ascending
  std::unordered_set<uint64_t> own;
  std::unordered_set<uint64_t> callReturns;

  // 0: the target's own code; k: a callee, frame k returns into the target; nullopt: outside.
  std::optional<size_t> depthOf(const Sample &sample) const {
    if (sample.stack.empty())
      return std::nullopt;
    if (own.count(sample.stack[0]))
      return 0;
    for (size_t k = 1; k < sample.stack.size(); ++k)
      if (callReturns.count(sample.stack[k]))
        return k;
    return std::nullopt;
  }
};

LoopTarget targetOf(const ControlFlowGraph &cfg, std::span<const uint64_t> addresses) {
  LoopTarget target;
  target.instructions.assign(addresses.begin(), addresses.end());
  target.own.insert(addresses.begin(), addresses.end());
  for (const CfgInstruction &insn : cfg.instructions())
    if (target.own.count(insn.address) && isCall(insn.kind))
      target.callReturns.insert(insn.address + insn.length);
  return target;
}

std::vector<uint64_t> allInstructions(const ControlFlowGraph &cfg) {
  std::vector<uint64_t> addresses;
  for (const CfgInstruction &insn : cfg.instructions())
    addresses.push_back(insn.address);
  return addresses;
}

LoopTarget loopTargetOf(CaptureAnnotator &annotator, const LoopCaptureInfo &info) {
  const ControlFlowGraph *cfg = annotator.graph(info.functionStart);
  if (!cfg)
    throw LoopTraceError(fmt::format("the capture holds no code for the loop's function at {:#x}",
                                     info.functionStart));
  if (info.wholeFunction)
    return targetOf(*cfg, allInstructions(*cfg));
  const Loop *loop = cfg->loopAt(info.head);
  if (!loop)
    throw LoopTraceError(fmt::format("{:#x} is no loop head in {}", info.head, cfg->function()));
  return targetOf(*cfg, loop->addresses);
}

std::string splitReason(const LoopCaptureInfo &info) {
  switch (info.split) {
  case LoopSplit::Marker:
    return "a breakpoint at the loop head: one stop per iteration";
  case LoopSplit::PerSample:
    return "iterations shorter than a few sampling periods: each sample is its own partial "
           "sequence, with no trap per iteration";
  case LoopSplit::Expression:
    return fmt::format("'{}' read at each sample", info.expression);
  case LoopSplit::Count:
    return fmt::format("every {} samples of the loop", info.countT);
  }
  return {};
}

ReconstructOptions reconstructOptions(const LoopRebuildOptions &options) {
  ReconstructOptions reconstruct;
  switch (options.mode) {
  case LoopMode::Time:
    reconstruct = ReconstructOptions::efficient(ScoreTables::timeMode(), SamplingKind::Time);
    break;
  case LoopMode::Count:
    reconstruct = ReconstructOptions::efficient(ScoreTables::countMode(), SamplingKind::Count);
    break;
  case LoopMode::BasicBlock:
    reconstruct = ReconstructOptions::efficient(ScoreTables::basicBlockMode(), SamplingKind::Count);
    break;
  }
  reconstruct.tables.useCallingContext = options.context;
  return reconstruct;
}

// Which iteration each sample fell in, by the capture's split (Count is split afterwards).
std::optional<uint64_t> iterationOf(const LoopCaptureInfo &info,
                                    const std::vector<uint64_t> &hitTimes, size_t index,
                                    const Sample &sample) {
  switch (info.split) {
  case LoopSplit::Marker: {
    auto hits =
        std::upper_bound(hitTimes.begin(), hitTimes.end(), sample.timeNs) - hitTimes.begin();
    return hits == 0 ? std::nullopt : std::optional<uint64_t>(hits);
  }
  case LoopSplit::Expression: {
    auto value = info.expressionValues.find(index);
    return value == info.expressionValues.end() ? std::nullopt
                                                : std::optional<uint64_t>(value->second);
  }
  case LoopSplit::PerSample:
  case LoopSplit::Count:
    return index;
  }
  return std::nullopt;
}

// Evenly spaced iterations, at most `limit` of them.
std::vector<PartialSequence> capIterations(std::vector<PartialSequence> iterations, size_t limit,
                                           size_t &left) {
  if (iterations.size() <= limit)
    return iterations;
  std::vector<PartialSequence> kept;
  kept.reserve(limit);
  for (size_t i = 0; i < limit; ++i)
    kept.push_back(std::move(iterations[i * iterations.size() / limit]));
  left = iterations.size() - limit;
  return kept;
}

// The pcs one single-stepped iteration executed: record 0 is the state at the head, record k the
// state after instruction k-1; the last record is back at the head (the next iteration). For a
// whole function only the records at or below the entry's stack pointer are its own (and its
// callees'): the caller runs between two calls.
std::vector<uint64_t> truthPcs(const Capture &capture, const StepTrace &truth, uint64_t head,
                               bool wholeFunction) {
  const RegisterTable &table = registerTable(capture.header.isa);
  std::vector<uint64_t> pcs;
  if (truth.empty())
    return pcs;
  uint64_t end = truth.size();
  if (end > 1 && truth.back().regs.at(table.pc) == head)
    --end;
  uint64_t entrySp = 0, k = 0;
  truth.forEach([&](const TraceRecord &record) {
    if (k == 0)
      entrySp = record.regs.at(table.sp);
    if (k++ < end && !(wholeFunction && record.regs.at(table.sp) > entrySp))
      pcs.push_back(record.regs.at(table.pc));
  });
  return pcs;
}

LoopVerification verify(const Capture &capture, const LoopRebuild &rebuilt,
                        const StepTrace &truth) {
  const LoopCaptureInfo &info = *capture.loop;
  LoopVerification verification;
  verification.truth = truthPcs(capture, truth, info.head, info.wholeFunction);
  std::vector<uint64_t> reconstructed;
  for (const LoopStep &step : rebuilt.path)
    reconstructed.push_back(step.element.pc);
  verification.accuracy = traceAccuracy(reconstructed, verification.truth);
  verification.mergedAccuracy = traceAccuracy(tracePcs(rebuilt.trace.trace), verification.truth);
  std::unordered_set<uint64_t> sampled;
  for (const PartialSequence &sequence : rebuilt.iterations)
    for (const Element &element : sequence)
      sampled.insert(element.pc);
  std::set<uint64_t> distinct(verification.truth.begin(), verification.truth.end());
  size_t covered = std::count_if(distinct.begin(), distinct.end(),
                                 [&](uint64_t pc) { return sampled.count(pc) > 0; });
  verification.truthCoverage =
      distinct.empty() ? 0 : static_cast<double>(covered) / static_cast<double>(distinct.size());
  return verification;
}

} // namespace

LoopRebuild rebuildLoop(const Capture &capture, const LoopRebuildOptions &options,
                        const StepTrace *truth) {
  if (!capture.loop)
    throw LoopTraceError("the capture holds no loop capture ('strobe loop' makes one)");
  const LoopCaptureInfo &info = *capture.loop;
  CaptureAnnotator annotator(capture);
  LoopTarget target = loopTargetOf(annotator, info);

  LoopRebuild rebuilt;
  rebuilt.mode = options.mode;
  rebuilt.loopInstructions = target.instructions;
  rebuilt.split = info.split;
  rebuilt.splitReason = splitReason(info);

  struct InTarget {
    size_t index;
    size_t depth;
  };
  std::vector<InTarget> used;
  for (size_t index = 0; index < capture.samples.size(); ++index) {
    const Sample &sample = capture.samples[index];
    if (sample.tid != info.tid)
      continue;
    ++rebuilt.threadSamples;
    std::optional<size_t> depth = target.depthOf(sample);
    if (!depth) {
      ++rebuilt.outsideSamples;
      continue;
    }
    used.push_back({index, *depth});
    annotator.note(sample.stack[0]);
    if (*depth > 0)
      annotator.note(sample.stack[1] - 1);
  }

  std::vector<uint64_t> hitTimes;
  for (const MarkerHit &hit : info.markerHits)
    if (hit.tid == info.tid)
      hitTimes.push_back(hit.timeNs);
  std::sort(hitTimes.begin(), hitTimes.end());

  std::vector<LoopSample> samples;
  samples.reserve(used.size());
  for (const InTarget &entry : used) {
    const Sample &sample = capture.samples[entry.index];
    Element element =
        annotator.element(sample.stack[0], options.context && entry.depth > 0
                                               ? std::optional<uint64_t>(sample.stack[1] - 1)
                                               : std::nullopt);
    samples.push_back({element, sample.timeNs, iterationOf(info, hitTimes, entry.index, sample)});
  }

  Split split =
      info.split == LoopSplit::Count
          ? splitByCount(samples, info.countT, 1)
          : splitByIteration(samples, info.split == LoopSplit::Expression ? SplitMethod::Expression
                                                                          : SplitMethod::Marker);
  rebuilt.droppedSamples = split.droppedSamples;

  ReconstructOptions reconstruct = reconstructOptions(options);
  rebuilt.iterations = capIterations(std::move(split.iterations), reconstruct.sequenceLimit,
                                     rebuilt.cappedIterations);
  ControlFlowEdges edges = annotator.edges();
  if (options.mode == LoopMode::BasicBlock)
    reconstruct.edges = &edges;
  reconstruct.loopInstructions = target.instructions;
  rebuilt.trace = reconstructLoopTrace(rebuilt.iterations, reconstruct);
  if (options.context)
    walkRebuiltLoop(capture, annotator, rebuilt);
  else
    for (const WeightedElement &entry : rebuilt.trace.trace)
      rebuilt.path.push_back({entry.element, entry.weight, false});
  rebuilt.functions = annotator.functions();
  if (truth)
    rebuilt.verification = verify(capture, rebuilt, *truth);
  return rebuilt;
}

std::optional<uint64_t> hottestLoopHead(const Capture &capture) {
  CaptureAnnotator annotator(capture);
  struct Candidate {
    uint64_t head;
    unsigned depth;
    size_t samples;
  };
  std::vector<Candidate> candidates;
  for (const auto &[start, bytes] : capture.code) {
    const ControlFlowGraph *cfg = annotator.graph(start);
    if (!cfg)
      continue;
    for (const Loop &loop : cfg->loops()) {
      LoopTarget target = targetOf(*cfg, loop.addresses);
      size_t held = std::count_if(capture.samples.begin(), capture.samples.end(),
                                  [&](const Sample &s) { return target.depthOf(s).has_value(); });
      if (held > 0)
        candidates.push_back({loop.head, loop.depth, held});
    }
  }
  if (candidates.empty())
    return std::nullopt;
  size_t most = 0;
  for (const Candidate &c : candidates)
    most = std::max(most, c.samples);
  const Candidate *chosen = nullptr;
  for (const Candidate &c : candidates) {
    if (c.samples * 10 < most * 9)
      continue;
    if (!chosen || c.depth > chosen->depth ||
        (c.depth == chosen->depth && c.samples > chosen->samples))
      chosen = &c;
  }
  return chosen->head;
}

} // namespace strobe
