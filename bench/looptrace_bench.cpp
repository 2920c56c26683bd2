// Loop-trace reconstruction (spec 000) on synthetic loops with a known truth: run time of the
// efficient and the literal form, accuracy against the number of samples, and what the calling
// context adds on the spec's func_M. Prints Markdown (paste it into bench/RESULTS-looptrace.md).
//
//     build/bench/looptrace_bench [--literal-cap-seconds S] [--section time|accuracy|context]
#include "analysis/looptrace/EditDistance.h"
#include "analysis/looptrace/Reconstruct.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

using namespace strobe;

namespace {

using Clock = std::chrono::steady_clock;
using Random = std::mt19937;

struct Call {
  uint32_t function;
  std::vector<uint32_t> blocks; // sizes of its straight-line basic blocks
  uint32_t callSite;
};

// One execution of a body making `calls` in turn; the call site is the calling context.
std::vector<Element> makeBody(const std::vector<Call> &calls) {
  std::vector<Element> body;
  for (const Call &call : calls) {
    uint32_t ordinal = 0;
    for (uint32_t block = 0; block < call.blocks.size(); ++block)
      for (uint32_t offset = 0; offset < call.blocks[block]; ++offset, ++ordinal) {
        Element e;
        e.function = call.function;
        e.ordinal = ordinal;
        e.block = block + 1;
        e.blockOffset = offset;
        e.pc = 0x400000 + uint64_t{call.function} * 0x10000 + ordinal * 4;
        e.context = CallingContext{100, call.callSite};
        body.push_back(e);
      }
  }
  return body;
}

// Straight-line blocks: each falls through to the next.
ControlFlowEdges fallThroughEdges(const std::vector<Element> &body) {
  ControlFlowEdges edges;
  for (const Element &e : body)
    if (e.block > 1)
      edges.add(e.function, e.block - 1, e.block);
  return edges;
}

// A loop body of eight calls to five functions, 20 to 120 instructions each (600 in all).
std::vector<Element> largeBody() {
  return makeBody({{1, {40}, 1},
                   {2, {120}, 2},
                   {3, {20}, 3},
                   {2, {120}, 4},
                   {4, {60}, 5},
                   {3, {20}, 6},
                   {5, {100}, 7},
                   {4, {60}, 8},
                   {1, {40}, 9}});
}

// The spec's func_M: A, B three times, C, ten instructions each, in embodiment 2's blocks.
std::vector<Element> funcM() {
  return makeBody(
      {{1, {4, 3, 3}, 1}, {2, {3, 7}, 3}, {2, {3, 7}, 5}, {2, {3, 7}, 7}, {3, {10}, 9}});
}

std::vector<Element> expand(const std::vector<Element> &body, const std::vector<uint32_t> &costs) {
  std::vector<Element> timeline;
  for (size_t i = 0; i < body.size(); ++i)
    timeline.insert(timeline.end(), costs[i], body[i]);
  return timeline;
}

std::vector<uint32_t> randomCosts(Random &random, size_t n) {
  std::uniform_int_distribution<uint32_t> cost(1, 4);
  std::vector<uint32_t> costs(n);
  for (uint32_t &c : costs)
    c = cost(random);
  return costs;
}

// `iterations` executions, each sampled every `interval` steps from a random phase; with
// `jitter` > 0 every gap varies by up to that fraction, as strobe's timer does (10 %).
std::vector<PartialSequence> sample(Random &random, const std::vector<Element> &timeline,
                                    size_t interval, size_t iterations, double jitter = 0) {
  std::uniform_int_distribution<size_t> phase(0, interval - 1);
  std::uniform_real_distribution<double> spread(-jitter, jitter);
  std::vector<PartialSequence> sequences(iterations);
  for (PartialSequence &sequence : sequences)
    for (double step = static_cast<double>(phase(random)); step < timeline.size();
         step += static_cast<double>(interval) * (1 + spread(random)))
      sequence.push_back(timeline[static_cast<size_t>(step)]);
  return sequences;
}

std::vector<PartialSequence> singletons(const std::vector<PartialSequence> &sequences) {
  std::vector<PartialSequence> result;
  for (const PartialSequence &sequence : sequences)
    for (const Element &e : sequence)
      result.push_back({e});
  return result;
}

std::vector<uint64_t> pcs(const std::vector<Element> &body) {
  std::vector<uint64_t> result;
  for (const Element &e : body)
    result.push_back(e.pc);
  return result;
}

double secondsOf(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double threadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Timed {
  LoopTrace result;
  double seconds = 0;    // wall clock
  double cpuSeconds = 0; // this thread's CPU time: what the run costs on a machine of its own
};

// Best of `runs`, so another process on the shared cores does not inflate the figure.
Timed timed(const std::vector<PartialSequence> &sequences, const ReconstructOptions &options,
            int runs) {
  Timed best;
  for (int run = 0; run < runs; ++run) {
    Clock::time_point start = Clock::now();
    double cpuStart = threadCpuSeconds();
    LoopTrace result = reconstructLoopTrace(sequences, options);
    double cpu = threadCpuSeconds() - cpuStart;
    double seconds = secondsOf(Clock::now() - start);
    if (run == 0 || seconds < best.seconds)
      best = {std::move(result), seconds, cpu};
  }
  return best;
}

void runTime(double literalCap) {
  std::vector<Element> body = largeBody();
  Random random(1);
  std::vector<Element> timeline = expand(body, randomCosts(random, body.size()));
  const size_t interval = 150;
  fmt::print("## Run time\n\nBody: {} instructions in 9 calls of 5 functions, 1-4 time units "
             "each ({} units per iteration); time-mode sampling every {} units from a random "
             "phase per iteration (about {} samples per partial sequence). Best of 3 runs; the "
             "literal form once, stopped after the first size over {} s or over its limit of "
             "2^20 patterns per merge.\n\n",
             body.size(), timeline.size(), interval, timeline.size() / interval, literalCap);
  fmt::print("| partial sequences | samples | efficient wall (s) | efficient CPU (s) | accuracy | "
             "literal wall (s) | literal accuracy | same trace |\n"
             "|---|---|---|---|---|---|---|---|\n");
  bool literalRuns = true;
  for (size_t n : {4, 8, 12, 16, 24, 32, 250, 500, 1000, 2000}) {
    Random phases(n);
    std::vector<PartialSequence> sequences = sample(phases, timeline, interval, n);
    size_t samples = 0;
    for (const PartialSequence &s : sequences)
      samples += s.size();
    ReconstructOptions efficient =
        ReconstructOptions::efficient(ScoreTables::timeMode(), SamplingKind::Time);
    Timed fast = timed(sequences, efficient, 3);
    double accuracy = traceAccuracy(tracePcs(fast.result.trace), pcs(body));
    std::string literalColumns = "– | – | –";
    if (literalRuns) {
      try {
        Timed slow = timed(
            sequences, ReconstructOptions::literal(ScoreTables::timeMode(), SamplingKind::Time), 1);
        literalColumns =
            fmt::format("{:.4f} | {:.3f} | {}", slow.seconds,
                        traceAccuracy(tracePcs(slow.result.trace), pcs(body)),
                        tracePcs(slow.result.trace) == tracePcs(fast.result.trace) ? "yes" : "no");
        literalRuns = slow.seconds <= literalCap;
      } catch (const LoopTraceError &error) {
        literalColumns = "over the pattern limit | – | –";
        literalRuns = false;
      }
    }
    fmt::print("| {} | {} | {:.4f} | {:.4f} | {:.3f} | {} |\n", n, samples, fast.seconds,
               fast.cpuSeconds, accuracy, literalColumns);
  }
  fmt::print("\n");
}

void runAccuracy() {
  std::vector<Element> body = largeBody();
  Random random(2);
  std::vector<Element> timeline = expand(body, randomCosts(random, body.size()));
  fmt::print("## Accuracy against the number of samples\n\nThe same body and sampling; accuracy "
             "= 1 - edit distance / length between the reconstructed and the true instruction "
             "sequence (weights dropped), mean of 5 seeds, with pure annotation and with the "
             "calling context; \"flagged\" counts partial sequences reported as contradicting "
             "the result (with context).\n\n");
  struct Setting {
    size_t interval;
    double jitter;
    bool singletons; // every sample made a partial sequence of its own
  };
  for (Setting setting :
       {Setting{50, 0, false}, Setting{150, 0, false}, Setting{500, 0, false},
        Setting{150, 0.1, false}, Setting{150, 0.1, true}, Setting{timeline.size(), 0, false}}) {
    size_t interval = setting.interval;
    std::string note = setting.singletons   ? ", every gap jittered by up to 10 %, every sample "
                                              "its own partial sequence"
                       : setting.jitter > 0 ? ", every gap jittered by up to 10 %"
                       : interval == timeline.size() ? " (one sample per iteration)"
                                                     : "";
    fmt::print("Interval {} time units{}:\n\n| iterations | samples | coverage | accuracy "
               "(pure) | accuracy (context) | flagged |\n|---|---|---|---|---|---|\n",
               interval, note);
    for (size_t n : {10, 25, 50, 100, 250, 500, 1000, 2000}) {
      if (setting.singletons && n > 250)
        break; // ten samples per iteration: over 2,500 partial sequences
      double accuracy[2] = {0, 0}, coverage = 0, samples = 0, flagged = 0;
      for (unsigned seed = 0; seed < 5; ++seed) {
        Random phases(seed * 7919 + n);
        std::vector<PartialSequence> sequences =
            sample(phases, timeline, interval, n, setting.jitter);
        if (setting.singletons)
          sequences = singletons(sequences);
        for (int context = 0; context < 2; ++context) {
          ScoreTables tables = ScoreTables::timeMode();
          tables.useCallingContext = context == 1;
          ReconstructOptions options = ReconstructOptions::efficient(tables, SamplingKind::Time);
          options.loopInstructions = pcs(body);
          LoopTrace result = reconstructLoopTrace(sequences, options);
          accuracy[context] += traceAccuracy(tracePcs(result.trace), pcs(body)) / 5;
          if (context == 1) {
            coverage += result.diagnostics.coverage.value_or(0) / 5;
            samples += static_cast<double>(result.diagnostics.samples) / 5;
            flagged += static_cast<double>(result.diagnostics.contradictions.size()) / 5;
          }
        }
      }
      fmt::print("| {} | {:.0f} | {:.3f} | {:.3f} | {:.3f} | {:.1f} |\n", n, samples, coverage,
                 accuracy[0], accuracy[1], flagged);
    }
    fmt::print("\n");
  }
}

void runContext() {
  std::vector<Element> body = funcM();
  ControlFlowEdges edges = fallThroughEdges(body);
  fmt::print("## Pure against context-enriched annotation on func_M\n\nfunc_M = A, B, B, B, C "
             "(10 instructions each, embodiment 2's blocks). Count mode: every phase of the "
             "interval sampled once. Time mode: 1-4 units per instruction, 3 x interval "
             "iterations at random phases (or 500 iterations of one sample each). Mean accuracy "
             "over 20 seeds. \"context\" adds the "
             "call site (frame 1) to every sample; \"context + blocks\" also scores basic blocks "
             "with the CFG edge bonus (the basic-block tables of the mode).\n\n"
             "| mode | interval | pure | context | context + blocks |\n|---|---|---|---|---|\n");
  for (bool timeMode : {false, true})
    for (size_t interval : {3, 7, 9, 11, 13, 17, 23, 0}) {
      double accuracy[3] = {0, 0, 0};
      for (unsigned seed = 0; seed < 20; ++seed) {
        Random random(seed + 1000 * interval);
        std::vector<PartialSequence> sequences;
        if (timeMode) {
          std::vector<Element> timeline = expand(body, randomCosts(random, body.size()));
          sequences = interval == 0 ? sample(random, timeline, timeline.size(), 500)
                                    : sample(random, timeline, interval, 3 * interval);
        } else if (interval == 0) {
          break; // count mode needs every phase of an interval
        } else {
          for (size_t phase = 0; phase < interval; ++phase) {
            sequences.emplace_back();
            for (size_t step = phase; step < body.size(); step += interval)
              sequences.back().push_back(body[step]);
          }
          std::shuffle(sequences.begin(), sequences.end(), random);
        }
        SamplingKind kind = timeMode ? SamplingKind::Time : SamplingKind::Count;
        for (int variant = 0; variant < 3; ++variant) {
          ScoreTables tables =
              timeMode
                  ? (variant == 2 ? ScoreTables::basicBlockTimeMode() : ScoreTables::timeMode())
                  : (variant == 2 ? ScoreTables::basicBlockMode() : ScoreTables::countMode());
          tables.useCallingContext = variant >= 1;
          ReconstructOptions options = ReconstructOptions::efficient(tables, kind);
          options.edges = &edges;
          LoopTrace result = reconstructLoopTrace(sequences, options);
          accuracy[variant] += traceAccuracy(tracePcs(result.trace), pcs(body)) / 20;
        }
      }
      if (!timeMode && interval == 0)
        continue;
      std::string label = interval > 0 ? fmt::format("{}", interval) : "one sample each, 500";
      fmt::print("| {} | {} | {:.3f} | {:.3f} | {:.3f} |\n", timeMode ? "time" : "count", label,
                 accuracy[0], accuracy[1], accuracy[2]);
    }
  fmt::print("\n");
}

} // namespace

int main(int argc, char **argv) {
  double literalCap = 10;
  std::string section;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--literal-cap-seconds") == 0)
      literalCap = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--section") == 0)
      section = argv[i + 1];
  }
  if (section.empty() || section == "time")
    runTime(literalCap);
  if (section.empty() || section == "accuracy")
    runAccuracy();
  if (section.empty() || section == "context")
    runContext();
}
