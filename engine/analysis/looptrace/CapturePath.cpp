#include "analysis/looptrace/CapturePath.h"

#include "analysis/looptrace/PathWalk.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace strobe {
namespace {

// The call instruction that returns to `returnAddress`, in the captured code.
const CfgInstruction *callBefore(CaptureAnnotator &annotator, uint64_t returnAddress) {
  std::optional<uint64_t> start = annotator.codedFunctionAt(returnAddress - 1);
  const ControlFlowGraph *cfg = start ? annotator.graph(*start) : nullptr;
  const CfgInstruction *call = cfg ? cfg->instructionAtOrBefore(returnAddress - 1) : nullptr;
  return call && call->address + call->length == returnAddress ? call : nullptr;
}

using ContextKey = std::pair<uint32_t, uint32_t>; // (function id, ordinal) of a call site

// What the loop thread's stacks tell about calls: the address of each call site an element may
// name, and the function each call site whose callee the code does not tell was seen running most
// (an indirect call's callee, or the library function a PLT stub's jump goes on to).
struct CallEvidence {
  std::map<ContextKey, uint64_t> callSites;
  std::map<uint64_t, uint64_t> indirectCallees;
};

CallEvidence callEvidence(const Capture &capture, CaptureAnnotator &annotator) {
  CallEvidence evidence;
  std::map<uint64_t, std::map<uint64_t, size_t>> seen; // call site -> callee entry -> times
  for (const Sample &sample : capture.samples) {
    if (sample.tid != capture.loop->tid)
      continue;
    for (size_t j = 0; j + 1 < sample.stack.size(); ++j) {
      const CfgInstruction *call = callBefore(annotator, sample.stack[j + 1]);
      if (!call)
        break; // the frames above belong to code strobe has not got
      if (j == 0) {
        Place site = annotator.place(call->address);
        evidence.callSites.emplace(ContextKey{site.function, site.ordinal}, call->address);
      }
      uint64_t inCallee = j == 0 ? sample.stack[0] : sample.stack[j] - 1;
      std::optional<uint64_t> callee = annotator.codedFunctionAt(inCallee);
      const bool codeTells = call->kind == BranchKind::Call && call->target &&
                             annotator.codedFunctionAt(*call->target) == callee;
      if (callee && !codeTells && isCall(call->kind))
        ++seen[call->address][*callee];
    }
  }
  for (const auto &[site, callees] : seen)
    evidence.indirectCallees[site] =
        std::max_element(callees.begin(), callees.end(), [](const auto &a, const auto &b) {
          return a.second < b.second;
        })->first;
  return evidence;
}

PathPoint pointOf(const Element &element, const CallEvidence &evidence) {
  PathPoint point{element.pc, std::nullopt};
  if (element.context) {
    auto site = evidence.callSites.find({element.context->function, element.context->ordinal});
    if (site != evidence.callSites.end())
      point.callSite = site->second;
  }
  return point;
}

// A sample (as split into iterations) falls on a step when the pc and, if it names one, the call
// site agree.
bool fallsOn(const Element &sample, const Element &step) {
  return sample.pc == step.pc && (!sample.context || sample.context == step.context);
}

// An element's instruction and call site, as an ordered key.
using PlaceKey = std::tuple<uint64_t, bool, uint32_t, uint32_t>;

PlaceKey placeKey(const Element &e) {
  return {e.pc, e.context.has_value(), e.context ? e.context->function : 0,
          e.context ? e.context->ordinal : 0};
}

using SequenceKey = std::vector<PlaceKey>;

// An element's basic block under its call site, as an ordered key.
PlaceKey blockKey(const Element &e) {
  return {uint64_t{e.function} << 32 | e.block, e.context.has_value(),
          e.context ? e.context->function : 0, e.context ? e.context->ordinal : 0};
}

// Instructions in the element's basic block; nullopt outside the code the capture holds.
std::optional<size_t> blockSize(CaptureAnnotator &annotator, const Element &element) {
  std::optional<uint64_t> start = annotator.codedFunctionAt(element.pc);
  const ControlFlowGraph *cfg = start ? annotator.graph(*start) : nullptr;
  if (!cfg || element.block >= cfg->blocks().size())
    return std::nullopt;
  return cfg->blocks()[element.block].instructionCount;
}

SequenceKey keyOf(const PartialSequence &sequence) {
  SequenceKey key;
  for (const Element &e : sequence)
    key.push_back(placeKey(e));
  return key;
}

} // namespace

void walkRebuiltLoop(const Capture &capture, CaptureAnnotator &annotator, LoopRebuild &rebuilt) {
  rebuilt.path.clear();
  if (rebuilt.trace.trace.empty())
    return; // nothing sampled: no evidence the loop ran at all
  rebuilt.walked = true;
  const LoopCaptureInfo &info = *capture.loop;
  CallEvidence evidence = callEvidence(capture, annotator);
  PathWalkRequest request;
  request.start = info.head;
  request.wholeFunction = info.wholeFunction;
  request.loopAddresses = rebuilt.loopInstructions;
  request.indirectCallees = evidence.indirectCallees;
  // The walk is steered by the merged trace's instructions in order, leaving out those of basic
  // blocks (under one call site) with a tenth of the median samples per instruction or less: a
  // rarely taken path (every 1024th iteration) must not pull the walk through it, however slow
  // its instructions are. Left out, they are filled in if the path runs them anyway.
  std::map<PlaceKey, double> density; // (call site, function, block) -> samples per instruction
  for (const PartialSequence &sequence : rebuilt.iterations)
    for (const Element &element : sequence)
      if (std::optional<size_t> size = blockSize(annotator, element))
        density[blockKey(element)] += 1.0 / static_cast<double>(*size);
  std::vector<double> densities;
  for (const auto &[block, samples] : density)
    densities.push_back(samples);
  std::nth_element(densities.begin(), densities.begin() + densities.size() / 2, densities.end());
  double median = densities.empty() ? 0 : densities[densities.size() / 2];
  const std::vector<WeightedElement> &merged = rebuilt.trace.trace;
  std::vector<PathPoint> points;
  std::vector<size_t> steering; // index in `merged` of each point
  for (size_t i = 0; i < merged.size(); ++i) {
    const Element &element = merged[i].element;
    auto block = density.find(blockKey(element));
    if (block == density.end() || block->second * 10 <= median)
      continue;
    points.push_back(pointOf(element, evidence));
    steering.push_back(i);
  }
  GraphLookup graphs = [&annotator](uint64_t address) -> const ControlFlowGraph * {
    std::optional<uint64_t> start = annotator.codedFunctionAt(address);
    return start ? annotator.graph(*start) : nullptr;
  };
  WalkedPath walked = walkPath(request, points, graphs);

  // Calls into code the capture lacks (a function never sampled, a library behind its PLT) were
  // stepped over: what was sampled under them goes right after the call (or the stub's jump), in
  // address order.
  std::map<uint64_t, std::set<uint64_t>> uncodedUnder; // call site -> sampled pcs
  for (const PartialSequence &sequence : rebuilt.iterations)
    for (const Element &element : sequence)
      if (PathPoint point = pointOf(element, evidence);
          point.callSite && !annotator.codedFunctionAt(point.pc))
        uncodedUnder[*point.callSite].insert(point.pc);
  // Where the path leaves code out, the call site of what it leaves out: a call the walk did not
  // enter (its own), or a callee's indirect jump the walk took back to the caller for want of
  // the function it goes on to (the call that entered the callee).
  auto leftOutUnder = [&](size_t i) -> std::optional<uint64_t> {
    const PathPoint &step = walked.steps[i];
    const ControlFlowGraph *graph = graphs(step.pc);
    const CfgInstruction *insn = graph ? graph->instructionAtOrBefore(step.pc) : nullptr;
    if (!insn || insn->address != step.pc)
      return std::nullopt;
    // Whether the next step is under `site`.
    auto nextUnder = [&](std::optional<uint64_t> site) {
      return i + 1 < walked.steps.size() && walked.steps[i + 1].callSite == site;
    };
    if (insn->kind == BranchKind::IndirectJump) // a tail call it followed keeps the call site
      return nextUnder(step.callSite) ? std::nullopt : step.callSite;
    if (isCall(insn->kind) && !nextUnder(step.pc))
      return step.pc;
    return std::nullopt;
  };
  for (size_t i = 0; i < walked.steps.size(); ++i) {
    const PathPoint &step = walked.steps[i];
    rebuilt.path.push_back({annotator.element(step.pc, step.callSite), 0, false});
    const std::optional<uint64_t> under = leftOutUnder(i);
    if (!under)
      continue;
    if (std::find(rebuilt.steppedOverCalls.begin(), rebuilt.steppedOverCalls.end(), step.pc) ==
        rebuilt.steppedOverCalls.end())
      rebuilt.steppedOverCalls.push_back(step.pc);
    if (auto sampled = uncodedUnder.find(*under); sampled != uncodedUnder.end())
      for (uint64_t pc : sampled->second)
        rebuilt.path.push_back({annotator.element(pc, *under), 0, false});
  }
  rebuilt.pathComplete = walked.complete;
  if (!walked.complete) {
    // Past where the walk stopped (code strobe lacks, an indirect jump), the merge's order is all
    // there is.
    size_t matched = 0; // in `merged`, one past the last point the walk reached
    for (size_t i = 0; i < points.size(); ++i)
      if (!std::binary_search(walked.unreachedPoints.begin(), walked.unreachedPoints.end(), i))
        matched = steering[i] + 1;
    for (size_t i = matched; i < merged.size(); ++i)
      rebuilt.path.push_back({merged[i].element, 0, false});
  }

  // Each sample goes to the steps it falls on, shared evenly among them; a sample with none is off
  // the path, and so is its partial sequence.
  std::map<SequenceKey, size_t> contradicting; // -> index in diagnostics.contradictions
  std::vector<Contradiction> &contradictions = rebuilt.trace.diagnostics.contradictions;
  std::vector<bool> listed(rebuilt.iterations.size(), false);
  for (const Contradiction &c : contradictions)
    for (size_t i : c.iterations)
      listed[i] = true;
  std::unordered_map<uint64_t, std::vector<size_t>> stepsAt; // pc -> its steps
  for (size_t s = 0; s < rebuilt.path.size(); ++s)
    stepsAt[rebuilt.path[s].element.pc].push_back(s);
  std::vector<double> shares(rebuilt.path.size(), 0);
  rebuilt.offPathSamples = 0;
  for (size_t i = 0; i < rebuilt.iterations.size(); ++i) {
    size_t off = 0;
    for (const Element &sample : rebuilt.iterations[i]) {
      std::vector<size_t> on;
      if (auto steps = stepsAt.find(sample.pc); steps != stepsAt.end())
        for (size_t s : steps->second)
          if (fallsOn(sample, rebuilt.path[s].element))
            on.push_back(s);
      for (size_t s : on)
        shares[s] += 1.0 / static_cast<double>(on.size());
      off += on.empty();
    }
    rebuilt.offPathSamples += off;
    if (off == 0 || listed[i])
      continue;
    auto [at, added] = contradicting.emplace(keyOf(rebuilt.iterations[i]), contradictions.size());
    if (added)
      contradictions.push_back({{}, 0});
    contradictions[at->second].iterations.push_back(i);
    contradictions[at->second].misplacedSamples += off;
  }
  for (size_t s = 0; s < rebuilt.path.size(); ++s) {
    rebuilt.path[s].samples = static_cast<uint32_t>(shares[s] + 0.5);
    rebuilt.path[s].filled = shares[s] == 0;
  }
}

} // namespace strobe
