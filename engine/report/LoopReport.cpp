#include "report/LoopReport.h"

#include "isa/Disassembler.h"
#include "report/ProfileReport.h"
#include "report/Table.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace strobe {
namespace {

constexpr size_t kContradictionsListed = 3;
constexpr size_t kSamplesListed = 12;
// Below both, the summary suggests capturing more.
constexpr double kLowCoverage = 0.5;
constexpr size_t kFewSamples = 1000;

std::string label(const LoopRebuild &rebuilt, uint32_t function, uint32_t ordinal) {
  const std::string &name =
      function < rebuilt.functions.size() ? rebuilt.functions[function].name : "?";
  return fmt::format("{}:{}", name, ordinal);
}

std::string label(const LoopRebuild &rebuilt, const Element &element) {
  return label(rebuilt, element.function, element.ordinal);
}

// The label of the path's step at `pc`.
std::string stepLabel(const LoopRebuild &rebuilt, uint64_t pc) {
  for (const LoopStep &step : rebuilt.path)
    if (step.element.pc == pc)
      return label(rebuilt, step.element);
  return "?";
}

std::string contextLabel(const LoopRebuild &rebuilt, const Element &element) {
  return element.context ? label(rebuilt, element.context->function, element.context->ordinal)
                         : std::string();
}

std::string disassemble(const Capture &capture, Disassembler &disassembler, uint64_t pc) {
  auto after = capture.code.upper_bound(pc);
  if (after == capture.code.begin())
    return "?";
  const auto &[start, bytes] = *std::prev(after);
  if (pc >= start + bytes.size())
    return "?";
  std::span<const uint8_t> code(bytes);
  std::optional<Instruction> insn = disassembler.decode(code.subspan(pc - start), pc);
  return insn ? insn->text : "?";
}

std::string source(const Capture &capture, uint64_t pc) {
  auto line = capture.instructionLines.find(pc);
  if (line == capture.instructionLines.end() || line->second.file.empty())
    return {};
  return fmt::format("{}:{}", shortName(line->second.file), line->second.line);
}

std::string percent(double share) { return fmt::format("{:.1f}%", 100 * share); }

Table traceTable(const Capture &capture, const LoopRebuild &rebuilt) {
  bool weighted = rebuilt.mode == LoopMode::Time;
  std::vector<Table::Column> columns{{"#", "index"},
                                     {"instruction at", "element", Table::Align::Left},
                                     {"called from", "context", Table::Align::Left},
                                     {"address", "address", Table::Align::Left},
                                     {"disassembly", "disassembly", Table::Align::Left},
                                     {"source", "source", Table::Align::Left},
                                     {"samples", "samples"}};
  if (weighted)
    columns.push_back({"%", "share"});
  Table table(std::move(columns));
  uint64_t total = 0;
  for (const LoopStep &step : rebuilt.path)
    total += step.samples;
  Disassembler disassembler(capture.header.isa);
  size_t index = 0;
  for (const LoopStep &step : rebuilt.path) {
    const Element &element = step.element;
    std::string context = contextLabel(rebuilt, element);
    std::string text = disassemble(capture, disassembler, element.pc);
    std::string where = source(capture, element.pc);
    std::vector<Cell> cells{
        {fmt::format("{}", ++index), json::number(uint64_t{index})},
        {label(rebuilt, element), json::quote(label(rebuilt, element))},
        {context, context.empty() ? "null" : json::quote(context)},
        {fmt::format("{:#x}", element.pc), json::quote(fmt::format("{:#x}", element.pc))},
        {text, json::quote(text)},
        {where, where.empty() ? "null" : json::quote(where)},
        // "-": never sampled, filled in from the code.
        {step.filled ? "-" : fmt::format("{}", step.samples),
         json::number(uint64_t{step.samples})}};
    if (weighted) {
      double share = total ? static_cast<double>(step.samples) / static_cast<double>(total) : 0;
      cells.push_back({percent(share), json::number(100 * share, 2)});
    }
    json::Object extra;
    extra.add("filled", step.filled ? "true" : "false");
    table.add({std::move(cells), std::move(extra), {}});
  }
  return table;
}

size_t filledSteps(const LoopRebuild &rebuilt) {
  return std::count_if(rebuilt.path.begin(), rebuilt.path.end(),
                       [](const LoopStep &step) { return step.filled; });
}

std::string sequenceText(const LoopRebuild &rebuilt, const PartialSequence &sequence) {
  std::string text;
  for (size_t i = 0; i < sequence.size() && i < kSamplesListed; ++i)
    text += (i ? " " : "") + label(rebuilt, sequence[i]);
  if (sequence.size() > kSamplesListed)
    text += fmt::format(" ... ({} samples)", sequence.size());
  return text;
}

size_t contradictingIterations(const LoopRebuild &rebuilt) {
  size_t count = 0;
  for (const Contradiction &c : rebuilt.trace.diagnostics.contradictions)
    count += c.iterations.size();
  return count;
}

std::string splitName(LoopSplit split) {
  switch (split) {
  case LoopSplit::Marker:
    return "marker";
  case LoopSplit::PerSample:
    return "per-sample";
  case LoopSplit::Expression:
    return "expr";
  case LoopSplit::Count:
    return "count";
  }
  return "?";
}

std::string modeName(LoopMode mode) {
  return mode == LoopMode::Time ? "time" : mode == LoopMode::Count ? "count" : "bb";
}

// The inferior's thread runs between strobe's stops: the share of the capture it spent on a CPU
// is how fast a CPU-bound loop ran, against 100 % with no debugger.
std::optional<double> cpuShare(const Capture &capture) {
  if (!capture.loop || capture.loop->threadCpuNs == 0 || capture.durationNs == 0)
    return std::nullopt;
  return std::min(1.0, static_cast<double>(capture.loop->threadCpuNs) /
                           static_cast<double>(capture.durationNs));
}

// Beyond this slowdown a capture that trapped at the marker says what that cost: the issue's
// target for a loop capture.
constexpr double kMarkerNoteSlowdown = 0.05;

std::string costText(const Capture &capture) {
  size_t markerStops = capture.loop ? capture.loop->markerHits.size() : 0;
  std::string rate;
  if (capture.header.periodNs)
    rate = fmt::format(" ({:.0f} Hz)", 1e9 / capture.header.periodNs);
  std::string out = fmt::format("stops: {} to sample{}, {} at the marker, in {}", capture.stops,
                                rate, markerStops, formatDuration(capture.durationNs));
  std::optional<double> share = cpuShare(capture);
  if (share)
    out += fmt::format("; the loop's thread ran {} of that time: a CPU-bound loop ran {} slower "
                       "than without strobe",
                       percent(*share), percent(1 - *share));
  out += "\n";
  // Compared as printed, to a tenth of a percent.
  if (markerStops > 0 && share && std::round((1 - *share) * 1000) > kMarkerNoteSlowdown * 1000)
    out += fmt::format("note: the {} traps at the marker are not held to --overhead, which paces "
                       "the sample stops only; --split expr:VARIABLE or count:T take no trap per "
                       "iteration\n",
                       markerStops);
  return out;
}

std::string summaryText(const Capture &capture, const LoopRebuild &rebuilt) {
  const LoopTraceDiagnostics &d = rebuilt.trace.diagnostics;
  std::string out;
  out += fmt::format("iterations: {} partial sequences ({} distinct) from {} samples in the loop",
                     d.iterations, d.distinctSequences, d.samples);
  out += fmt::format("; {} samples of the thread outside the loop, {} in no complete iteration\n",
                     rebuilt.outsideSamples, rebuilt.droppedSamples);
  if (rebuilt.cappedIterations > 0)
    out += fmt::format("note: {} iterations left out (evenly) to stay under the limit of {} "
                       "partial sequences\n",
                       rebuilt.cappedIterations, d.iterations);
  out += fmt::format("split: {} ({}); mode: {}\n", splitName(rebuilt.split), rebuilt.splitReason,
                     modeName(rebuilt.mode));
  if (d.coverage) {
    out += fmt::format("coverage: {} of the loop's {} instructions were sampled\n",
                       percent(*d.coverage), rebuilt.loopInstructions.size());
    if (*d.coverage < kLowCoverage && d.samples < kFewSamples)
      out += fmt::format("note: {} samples are few for this loop; capture longer (--duration) or "
                         "more often (--frequency) for the time per instruction and for the "
                         "branches only samples can decide\n",
                         d.samples);
  }
  if (!rebuilt.path.empty() && !rebuilt.walked)
    out += "path: the merged samples as they are (--annotation pure: not walked through the "
           "code)\n";
  else if (rebuilt.walked)
    out += fmt::format(
        "path: {} instructions, {} of them never sampled and filled in from the code{}\n",
        rebuilt.path.size(), filledSteps(rebuilt),
        rebuilt.pathComplete ? ""
                             : "; the walk through the code stopped early (an indirect jump or "
                               "code the capture lacks): after that, the merged samples' order");
  if (!rebuilt.steppedOverCalls.empty()) {
    std::vector<std::string> calls;
    for (uint64_t call : rebuilt.steppedOverCalls)
      calls.push_back(fmt::format("{} at {:#x}", stepLabel(rebuilt, call), call));
    out += fmt::format("note: the path leaves out the code reached from {} instruction{} ({}): "
                       "calls into code the capture lacks, or indirect jumps in callees (taken "
                       "for tail calls back to the caller)\n",
                       calls.size(), calls.size() == 1 ? "" : "s", fmt::join(calls, ", "));
  }
  if (rebuilt.offPathSamples > 0)
    out +=
        fmt::format("off the path: {} of {} samples fell on instructions the path does not run\n",
                    rebuilt.offPathSamples, d.samples);
  out += fmt::format("mean likelihood per merge step: {:.2f} over {} steps\n", d.meanStepLikelihood,
                     d.mergeSteps);
  size_t contradicting = contradictingIterations(rebuilt);
  if (lowConfidence(rebuilt))
    out += fmt::format("LOW CONFIDENCE: {} of {} partial sequences contradict the trace: the "
                       "loop's path changes between iterations, so no single trace is right\n",
                       contradicting, d.iterations);
  else
    out += fmt::format("contradicting partial sequences: {} of {}\n", contradicting, d.iterations);
  for (size_t i = 0; i < d.contradictions.size() && i < kContradictionsListed; ++i) {
    size_t iteration = d.contradictions[i].iterations.front();
    out += fmt::format("  e.g. {}\n", sequenceText(rebuilt, rebuilt.iterations[iteration]));
  }
  out += costText(capture);
  if (rebuilt.verification)
    out += fmt::format("accuracy: {} against a single-stepped iteration of {} instructions "
                       "(the samples covered {} of them; the merged samples alone: {})\n",
                       percent(rebuilt.verification->accuracy), rebuilt.verification->truth.size(),
                       percent(rebuilt.verification->truthCoverage),
                       percent(rebuilt.verification->mergedAccuracy));
  return out;
}

json::Object summaryJson(const Capture &capture, const LoopRebuild &rebuilt) {
  const LoopTraceDiagnostics &d = rebuilt.trace.diagnostics;
  std::optional<double> share = cpuShare(capture);
  std::vector<std::string> steppedOverCalls;
  for (uint64_t call : rebuilt.steppedOverCalls)
    steppedOverCalls.push_back(json::quote(fmt::format("{:#x}", call)));
  std::vector<std::string> contradictions;
  for (const Contradiction &c : d.contradictions) {
    std::vector<std::string> elements;
    for (const Element &element : rebuilt.iterations[c.iterations.front()])
      elements.push_back(json::quote(label(rebuilt, element)));
    contradictions.push_back(
        json::Object()
            .add("iterations", json::number(uint64_t{c.iterations.size()}))
            .add("misplacedSamples", json::number(uint64_t{c.misplacedSamples}))
            .add("sequence", json::array(elements))
            .str());
  }
  json::Object summary;
  summary.add("iterations", json::number(uint64_t{d.iterations}))
      .add("distinctSequences", json::number(uint64_t{d.distinctSequences}))
      .add("samples", json::number(uint64_t{d.samples}))
      .add("threadSamples", json::number(uint64_t{rebuilt.threadSamples}))
      .add("outsideSamples", json::number(uint64_t{rebuilt.outsideSamples}))
      .add("droppedSamples", json::number(uint64_t{rebuilt.droppedSamples}))
      .add("cappedIterations", json::number(uint64_t{rebuilt.cappedIterations}))
      .add("split", json::quote(splitName(rebuilt.split)))
      .add("splitReason", json::quote(rebuilt.splitReason))
      .add("mode", json::quote(modeName(rebuilt.mode)))
      .add("loopInstructions", json::number(uint64_t{rebuilt.loopInstructions.size()}))
      .add("coverage", d.coverage ? json::number(*d.coverage, 4) : "null")
      .add("pathInstructions", json::number(uint64_t{rebuilt.path.size()}))
      .add("filledInstructions", json::number(uint64_t{filledSteps(rebuilt)}))
      .add("walked", rebuilt.walked ? "true" : "false")
      .add("pathComplete", rebuilt.pathComplete ? "true" : "false")
      .add("offPathSamples", json::number(uint64_t{rebuilt.offPathSamples}))
      .add("steppedOverCalls", json::array(steppedOverCalls))
      .add("mergeSteps", json::number(uint64_t{d.mergeSteps}))
      .add("meanStepLikelihood", json::number(d.meanStepLikelihood, 3))
      .add("contradictingIterations", json::number(uint64_t{contradictingIterations(rebuilt)}))
      .add("lowConfidence", lowConfidence(rebuilt) ? "true" : "false")
      .add("contradictions", json::array(contradictions))
      .add("sampleStops", json::number(capture.stops))
      .add("periodNs", json::number(capture.header.periodNs))
      .add("markerStops",
           json::number(uint64_t{capture.loop ? capture.loop->markerHits.size() : 0}))
      .add("durationNs", json::number(capture.durationNs))
      .add("threadCpuShare", share ? json::number(*share, 4) : "null");
  if (rebuilt.verification)
    summary.add("accuracy", json::number(rebuilt.verification->accuracy, 4))
        .add("truthInstructions", json::number(uint64_t{rebuilt.verification->truth.size()}))
        .add("truthCoverage", json::number(rebuilt.verification->truthCoverage, 4))
        .add("mergedAccuracy", json::number(rebuilt.verification->mergedAccuracy, 4));
  return summary;
}

} // namespace

bool lowConfidence(const LoopRebuild &rebuilt) {
  size_t contradicting = contradictingIterations(rebuilt);
  return contradicting >= kContradictionsForLowConfidence &&
         static_cast<double>(contradicting) >
             kContradictionTolerance * static_cast<double>(rebuilt.trace.diagnostics.iterations);
}

std::string renderLoop(const Capture &capture, const LoopRebuild &rebuilt, bool json) {
  Table table = traceTable(capture, rebuilt);
  if (json) {
    json::Object doc;
    if (capture.loop)
      doc.add("location", json::quote(capture.loop->location))
          .add("head", json::quote(fmt::format("{:#x}", capture.loop->head)))
          .add("wholeFunction", capture.loop->wholeFunction ? "true" : "false");
    table.addJson(doc);
    doc.add("summary", summaryJson(capture, rebuilt).str());
    return doc.str() + "\n";
  }
  std::string out;
  if (capture.loop)
    out += fmt::format("loop trace of {} ({} at {:#x}, {} instructions)\n", capture.loop->location,
                       capture.loop->wholeFunction ? "one call of the function" : "loop head",
                       capture.loop->head, rebuilt.loopInstructions.size());
  if (rebuilt.path.empty())
    out += fmt::format("no complete iteration was sampled: {} samples of the thread, {} of them "
                       "outside the loop; run longer (--duration) or check that the loop runs\n",
                       rebuilt.threadSamples, rebuilt.outsideSamples);
  else
    out += table.text();
  out += summaryText(capture, rebuilt);
  return out;
}

} // namespace strobe
