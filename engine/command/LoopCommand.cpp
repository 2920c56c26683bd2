// `strobe loop`: samples a running loop (or a function called over and over), splits the samples
// into iterations and rebuilds one iteration's instruction order (spec 000). With no process it
// rebuilds from the capture held (strobe-report loop FILE).
#include "analysis/looptrace/FromCapture.h"
#include "capture/FunctionCode.h"
#include "capture/LoopProbe.h"
#include "capture/ProcFile.h"
#include "capture/Stepper.h"
#include "capture/ThreadCpu.h"
#include "command/SessionImpl.h"
#include "isa/ControlFlow.h"
#include "report/LoopReport.h"
#include "report/ProfileReport.h"
#include "target/Location.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace strobe {
namespace {

constexpr double kLoopFrequency = 997; // prime, like the sampler's default
// The loop runs nearly at full speed: sample stops slow it down by 3 % at most, however slow the
// debugger's stops are (they lower the rate instead), which keeps the whole capture within 5 %
// with what is not a sample stop (arming, the probe, symbol lookups, the end) and with what the
// stops cost beyond what strobe times: on a tight loop calling a small function, its progress
// lost 5-6 % at a 4 % budget, caches and predictors refilled after each of the debugger's stops.
constexpr double kLoopSlowdown = 0.03;
constexpr unsigned kLoopStackDepth = 4;
constexpr uint64_t kLoopDuration = 2'000'000'000;
// How long `--split auto` watches the marker before it decides: until it has seen this many
// iterations of the loop's thread, or for the duration (the loop barely moves meanwhile when its
// iterations are short, so the probe ends as soon as it can).
constexpr size_t kProbeIterations = 16;
constexpr uint64_t kProbeDuration = 50'000'000;
// Stepping to the loop head for --verify gives up after this many instructions or this long (an
// LLDB step costs about 0.5 ms: a loop that ends, as when the program exits, would otherwise be
// stepped for a quarter of an hour).
constexpr uint64_t kVerifyStepLimit = 2'000'000;
constexpr uint64_t kVerifyTimeLimitNs = 30'000'000'000;

LoopSplit parseSplit(const std::string &text, LoopCaptureInfo &info, bool &automatic) {
  automatic = text == "auto";
  if (text == "auto" || text == "marker")
    return LoopSplit::Marker;
  if (text.starts_with("expr:") && text.size() > 5) {
    info.expression = text.substr(5);
    return LoopSplit::Expression;
  }
  if (text.starts_with("count:")) {
    try {
      info.countT = std::stoull(text.substr(6));
    } catch (const std::exception &) {
    }
    if (info.countT == 0)
      throw UsageError("--split count:T needs T > 0, the samples one iteration spans");
    return LoopSplit::Count;
  }
  throw UsageError(fmt::format(
      "--split must be auto, marker, expr:REGISTER_OR_VARIABLE or count:T, not '{}'", text));
}

// The walk through the code (analysis/looptrace/CapturePath.h) follows only calls into code the
// capture holds; the sampler copies the functions samples fell in, so the loop's direct callees
// that none fell in are copied here, a few calls deep.
void captureCallees(Target &target, Capture &capture, uint64_t functionStart) {
  constexpr unsigned kDepth = 3;
  constexpr size_t kFunctions = 64;
  InstructionDecoder decoder(capture.header.isa);
  std::vector<std::pair<uint64_t, unsigned>> work{{functionStart, 0}};
  std::set<uint64_t> seen{functionStart};
  while (!work.empty() && seen.size() < kFunctions) {
    auto [start, depth] = work.back();
    work.pop_back();
    auto code = capture.code.find(start);
    if (code == capture.code.end() || depth == kDepth)
      continue;
    ControlFlowGraph cfg(decoder, code->second, start);
    for (const CfgInstruction &insn : cfg.instructions()) {
      if (insn.kind != BranchKind::Call || !insn.target || !seen.insert(*insn.target).second)
        continue;
      SymbolInfo callee = target.symbolize(*insn.target);
      if (callee.start == *insn.target && captureFunctionCode(target, capture, callee))
        work.push_back({callee.start, depth + 1});
    }
  }
}

LoopRebuildOptions rebuildOptions(const ParsedCommand &cmd) {
  LoopRebuildOptions options;
  std::string mode = cmd.get("mode", "time");
  options.mode = mode == "count" ? LoopMode::Count
                 : mode == "bb"  ? LoopMode::BasicBlock
                                 : LoopMode::Time;
  options.context = cmd.get("annotation", "context") == "context";
  return options;
}

} // namespace

void Session::Impl::loop(const ParsedCommand &cmd, std::string &out) {
  bool json = cmd.has("json");
  if (!target || !target->hasProcess()) {
    if (!capture || !capture->loop)
      throw Failure(target ? "no process; launch or attach to one, then 'strobe loop --at LOOP'"
                           : "the capture holds no loop capture ('strobe loop' makes one)");
    out += renderLoop(*capture, rebuildLoop(*capture, rebuildOptions(cmd), nullptr), json);
    return;
  }
  Target &t = process();
  if (live)
    throw Failure("sampling is already running; 'strobe stop' ends it");
  if (cmd.has("at") == cmd.has("hottest"))
    throw UsageError("name the loop: --at FUNCTION|FILE:LINE|*ADDRESS, or --hottest");

  // Where the loop is.
  LoopCaptureInfo info;
  uint64_t address = 0;
  if (cmd.has("hottest")) {
    if (!capture || capture->samples.empty())
      throw Failure(
          "--hottest needs a profile; 'strobe record' first, then 'strobe loop --hottest'");
    captureCallersCode(t, *capture);
    std::optional<uint64_t> hot = hottestLoopHead(*capture);
    if (!hot)
      throw Failure("no loop holds the samples of the current profile; name one with --at, or "
                    "record with a deeper --stack (e.g. 8) so that the callers' loops show");
    address = *hot;
    info.location = fmt::format("*{:#x}", address);
  } else {
    info.location = cmd.get("at");
    std::vector<uint64_t> found = t.resolve(info.location);
    if (found.empty())
      throw Failure(
          fmt::format("no code at '{}'; give a FUNCTION, FILE:LINE or *ADDRESS", info.location));
    address = found.front();
  }
  SymbolInfo function = t.symbolize(address);
  if (function.start == 0 || function.size == 0)
    throw Failure(fmt::format("{:#x} is in no function whose size the debugger knows", address));
  std::vector<uint8_t> bytes = t.readMemory(function.start, function.size);
  InstructionDecoder decoder(t.isa());
  ControlFlowGraph cfg(decoder, bytes, function.start, function.function);
  info.functionStart = function.start;
  if (address == function.start && namesFunction(info.location)) {
    info.wholeFunction = true; // a function named: one call is one execution
    info.head = function.start;
  } else {
    const Loop *inner = cfg.innermostLoop(address);
    if (!inner)
      throw Failure(fmt::format("{} ({} + {}) is not inside a loop; name a line or address inside "
                                "one, or a function called over and over",
                                info.location, function.function, address - function.start));
    info.head = inner->head;
  }
  info.tid = t.currentThread();

  bool automatic = false;
  info.split = parseSplit(cmd.get("split", "auto"), info, automatic);
  std::optional<unsigned> splitRegister;
  std::optional<DataLocation> splitVariable;
  if (info.split == LoopSplit::Expression) {
    const RegisterTable &table = registerTable(t.isa());
    for (unsigned i = 0; i < table.regs.size(); ++i)
      if (table.regs[i] == info.expression)
        splitRegister = i;
    if (!splitRegister) {
      splitVariable = t.dataAddress(info.expression);
      if (!splitVariable)
        throw Failure(fmt::format(
            "'{}' is neither a register nor a global or static variable the debugger knows; give "
            "expr:REGISTER (e.g. expr:{}), expr:VARIABLE or expr:*ADDRESS",
            info.expression, table.regs.front()));
      if (splitVariable->size > 8)
        throw Failure(
            fmt::format("'{}' is {} bytes; an iteration number must be an integer of 1 to 8 bytes",
                        info.expression, splitVariable->size));
      if (splitVariable->size == 0) // only the address is known: a 64-bit counter
        splitVariable->size = 8;
    }
  }

  SamplingPlan plan = samplingPlan(cmd, {.hz = kLoopFrequency,
                                         .maxSlowdown = kLoopSlowdown,
                                         .depth = kLoopStackDepth,
                                         .duration = kLoopDuration,
                                         .blocking = true});
  std::optional<uint64_t> iterationsWanted;
  if (cmd.has("iterations"))
    iterationsWanted = cmd.whole("iterations", 0, 1, 1000000000);

  if (automatic) {
    // A short pass with the marker tells how long an iteration runs. Short iterations (see
    // kMarkerMinimumPeriods) give the merge little order, and a trap per iteration would
    // dominate the run time and drag the samples to the loop head, so the capture proper then
    // runs without the marker; the walk through the code orders the samples. (It is not removed
    // mid-capture: GDB defers deleting a breakpoint to the next real stop, and until then every
    // sample lands on it.)
    SamplingPlan probe = plan;
    probe.duration = kProbeDuration;
    arm(probe);
    LiveCapture *probing = live.get();
    std::vector<ProbeHit> hits;
    uint64_t pacedPeriodNs = static_cast<uint64_t>(1e9 / plan.hz);
    // Kept open: a fresh open per hit would add its 3 us to the iteration it times.
    ThreadProcFiles schedstat(probing->capture.header.pid, "schedstat");
    std::unique_ptr<Breakpoint> probeMarker =
        t.insertBreakpoint(info.head, [this, probing, &hits, &pacedPeriodNs, &schedstat,
                                       tid = info.tid](uint64_t hitTid) {
          if (live.get() != probing || hitTid != tid)
            return;
          hits.push_back({monotonicNs(), schedstatCpuNs(schedstat.read(tid))});
          pacedPeriodNs = probing->timer->pacedPeriodNs();
          if (hits.size() == kProbeIterations + 1)
            probing->timer->endSoon();
        });
    StopEvent stop = t.runUntilUserStop();
    probeMarker.reset();
    if (live) { // the user's stop or the end of the process, before the probe was over
      finish(describeStop(stop));
      out += endMessage + "\n";
      return;
    }
    std::optional<ProbeEstimate> estimate = estimateIteration(hits);
    if (estimate && hits.size() > 2 && !markerPays(*estimate, pacedPeriodNs, plan.maxSlowdown))
      info.split = LoopSplit::PerSample;
    // Its few samples only timed the loop: the capture proper replaces them without a word
    // (unless they joined heap tracking's capture, as the capture proper will).
    if (!(tracker && tracker->active()))
      capture.reset();
  }
  arm(plan);
  Capture &c = *capture;
  LiveCapture *running = live.get();
  std::optional<uint64_t> cpuBefore = threadCpuNs(c.header.pid, info.tid);
  std::unique_ptr<Breakpoint> marker;
  if (info.split == LoopSplit::Marker) {
    marker = t.insertBreakpoint(info.head, [this, running, &info](uint64_t tid) {
      if (live.get() == running)
        info.markerHits.push_back({tid, monotonicNs() - running->startNs});
    });
    if (!marker) {
      finish("the loop head could not take a breakpoint");
      throw Failure(fmt::format("cannot set a breakpoint at the loop head {:#x}; use --split "
                                "expr:VARIABLE or count:T",
                                info.head));
    }
  }
  running->afterSamples = [&](size_t first) {
    for (size_t i = first; i < c.samples.size(); ++i) {
      if (splitRegister)
        info.expressionValues[i] = c.samples[i].regs[*splitRegister];
      else if (splitVariable && c.samples[i].tid == info.tid) {
        // The inferior's little-endian bytes, whatever the host's order; an unreadable value
        // leaves the sample in no iteration.
        std::vector<uint8_t> bytes = t.readMemory(splitVariable->address, splitVariable->size);
        if (bytes.size() != splitVariable->size)
          continue;
        uint64_t value = 0;
        for (size_t b = 0; b < bytes.size(); ++b)
          value |= uint64_t{bytes[b]} << (8 * b);
        info.expressionValues[i] = value;
      }
    }
    uint64_t iterations =
        info.split == LoopSplit::Marker ? info.markerHits.size() : c.samples.size();
    if (iterationsWanted && iterations >= *iterationsWanted + 1)
      running->sampleLimit = c.stops; // ends the capture at this very stop
  };
  StopEvent last = t.runUntilUserStop();
  marker.reset();
  if (live)
    finish(describeStop(last));
  if (std::optional<uint64_t> cpuAfter = threadCpuNs(c.header.pid, info.tid); cpuBefore && cpuAfter)
    info.threadCpuNs = *cpuAfter - *cpuBefore;
  c.loop = info;
  out += endMessage + "\n";
  if (t.hasProcess() && !t.isRunning()) {
    captureFunctionCode(t, c, function);
    captureCallees(t, c, function.start);
  }

  std::optional<StepTrace> truth;
  if (cmd.has("verify") && t.hasProcess() && !t.isRunning()) {
    Stepper stepper(t);
    StepRequest toHead{info.tid, kVerifyStepLimit, {info.head}, false, {}, kVerifyTimeLimitNs};
    StepOutcome stepped = stepper.run(toHead);
    const char *leg = "to the loop head";
    if (stepped.reachedUntil) {
      stepped = stepper.run(toHead);
      leg = "through the iteration";
      if (stepped.reachedUntil)
        truth = std::move(stepped.trace);
    }
    // Where stepping gave up, so that a stuck step can be told from a long path.
    if (!truth)
      out += fmt::format("strobe: --verify could not single-step one whole iteration (at most {} "
                         "instructions and {} s to the loop head, then as many for one): {} after "
                         "{} instructions {} in {:.1f} s, the pc at {:#x}\n",
                         kVerifyStepLimit, kVerifyTimeLimitNs / 1'000'000'000, stepped.endReason,
                         stepped.trace.size() - 1, leg, stepped.durationNs / 1e9,
                         stepped.trace.back().regs.at(registerTable(t.isa()).pc));
  }
  LoopRebuild rebuilt = rebuildLoop(c, rebuildOptions(cmd), truth ? &*truth : nullptr);
  out += renderLoop(c, rebuilt, json);
}

} // namespace strobe
