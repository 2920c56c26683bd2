#include "analysis/looptrace/PathWalk.h"

#include <algorithm>
#include <set>
#include <unordered_set>

namespace strobe {
namespace {

// A search gives up beyond this many states: the iteration is then walked only in part.
constexpr size_t kSearchLimit = 200'000;

struct State {
  uint64_t pc = 0;
  std::vector<uint64_t> calls; // call instructions below the loop's frame, outermost first

  auto operator<=>(const State &) const = default;
  PathPoint point() const {
    return {pc, calls.empty() ? std::nullopt : std::optional<uint64_t>(calls.back())};
  }
};

class Walker {
public:
  Walker(const PathWalkRequest &request, const GraphLookup &graphs)
      : request_(request), graphs_(graphs),
        loop_(request.loopAddresses.begin(), request.loopAddresses.end()) {}

  // The states execution may go to after `from`; `ends` when the iteration may end there.
  std::vector<State> successors(const State &from, bool &ends) const {
    std::vector<State> next;
    ends = false;
    const CfgInstruction *insn = instructionAt(from.pc);
    if (!insn)
      return next;
    auto stay = [&](uint64_t pc, std::vector<uint64_t> calls) {
      if (calls.empty() && !request_.wholeFunction) {
        if (pc == request_.start) {
          ends = true;
          return;
        }
        if (!loop_.count(pc))
          return; // out of the loop: not this iteration's path
      }
      next.push_back({pc, std::move(calls)});
    };
    uint64_t after = insn->address + insn->length;
    switch (insn->kind) {
    case BranchKind::None:
    case BranchKind::Syscall:
      stay(after, from.calls);
      break;
    case BranchKind::Jump:
      if (insn->target)
        stay(*insn->target, from.calls);
      break;
    case BranchKind::ConditionalJump:
      stay(after, from.calls);
      if (insn->target)
        stay(*insn->target, from.calls);
      break;
    case BranchKind::IndirectJump:
      // Where to is in data. In a callee it is most often a tail call (a PLT stub into a
      // library): into the function the samples under the call ran in, when there is one with
      // code, else back to the caller. In the loop's own frame (a switch) the path stops.
      if (!from.calls.empty()) {
        auto seen = request_.indirectCallees.find(from.calls.back());
        const ControlFlowGraph *here = graphs_(from.pc);
        if (seen != request_.indirectCallees.end() && here && seen->second != here->start() &&
            instructionAt(seen->second))
          stay(seen->second, from.calls);
        else
          returnToCaller(from, stay);
      }
      break;
    case BranchKind::Call:
    case BranchKind::IndirectCall: {
      std::optional<uint64_t> callee = insn->target;
      if (insn->kind == BranchKind::IndirectCall) {
        auto seen = request_.indirectCallees.find(insn->address);
        if (seen != request_.indirectCallees.end())
          callee = seen->second;
      }
      if (callee && from.calls.size() < request_.maxDepth && instructionAt(*callee)) {
        std::vector<uint64_t> calls = from.calls;
        calls.push_back(insn->address);
        next.push_back({*callee, std::move(calls)});
      } else {
        stay(after, from.calls); // code strobe does not have: stepped over
      }
      break;
    }
    case BranchKind::Return:
      if (from.calls.empty())
        ends = request_.wholeFunction;
      else
        returnToCaller(from, stay);
      break;
    }
    return next;
  }

  // The shortest run of states from one of `initial` to a state `isGoal` accepts (or, with
  // `toEnd`, to a state the iteration may end after), both ends included; empty if none.
  template <typename Goal>
  std::vector<State> search(const std::vector<State> &initial, Goal isGoal, bool toEnd) const {
    struct Node {
      State state;
      size_t parent;
    };
    constexpr size_t kRoot = SIZE_MAX;
    std::vector<Node> nodes;
    std::set<State> seen;
    for (const State &state : initial)
      if (seen.insert(state).second)
        nodes.push_back({state, kRoot});
    for (size_t i = 0; i < nodes.size() && nodes.size() < kSearchLimit; ++i) {
      bool ends = false;
      std::vector<State> next = successors(nodes[i].state, ends);
      if ((!toEnd && isGoal(nodes[i].state)) || (toEnd && ends))
        return pathTo(nodes, i);
      for (State &state : next)
        if (seen.insert(state).second)
          nodes.push_back({std::move(state), i});
    }
    return {};
  }

private:
  template <typename Stay> void returnToCaller(const State &from, Stay &stay) const {
    if (const CfgInstruction *call = instructionAt(from.calls.back())) {
      std::vector<uint64_t> calls(from.calls.begin(), from.calls.end() - 1);
      stay(call->address + call->length, std::move(calls));
    }
  }

  template <typename Node>
  static std::vector<State> pathTo(const std::vector<Node> &nodes, size_t i) {
    std::vector<State> path;
    for (size_t at = i; at != SIZE_MAX; at = nodes[at].parent)
      path.push_back(nodes[at].state);
    std::reverse(path.begin(), path.end());
    return path;
  }

  const CfgInstruction *instructionAt(uint64_t pc) const {
    const ControlFlowGraph *graph = graphs_(pc);
    if (!graph)
      return nullptr;
    std::optional<CodeLocation> at = graph->locate(pc);
    return at ? &graph->instructions()[at->ordinal] : nullptr;
  }

  const PathWalkRequest &request_;
  const GraphLookup &graphs_;
  std::unordered_set<uint64_t> loop_;
};

bool matches(const State &state, const PathPoint &point) {
  if (state.pc != point.pc)
    return false;
  if (!point.callSite)
    return true;
  return !state.calls.empty() && state.calls.back() == *point.callSite;
}

} // namespace

WalkedPath walkPath(const PathWalkRequest &request, std::span<const PathPoint> points,
                    const GraphLookup &graphs) {
  Walker walker(request, graphs);
  WalkedPath path;
  std::optional<State> cursor; // the last state on the path
  auto emit = [&](const std::vector<State> &run) {
    for (const State &state : run)
      path.steps.push_back(state.point());
    if (!run.empty())
      cursor = run.back();
  };
  auto from = [&](bool &ends) {
    ends = false;
    return cursor ? walker.successors(*cursor, ends) : std::vector<State>{State{request.start, {}}};
  };

  for (size_t i = 0; i < points.size(); ++i) {
    bool ends = false;
    std::vector<State> initial = from(ends);
    const PathPoint &point = points[i];
    std::vector<State> run = walker.search(
        initial, [&](const State &s) { return matches(s, point); }, false);
    if (run.empty())
      path.unreachedPoints.push_back(i);
    else
      emit(run);
  }
  bool ends = false;
  std::vector<State> initial = from(ends);
  if (ends && cursor) {
    path.complete = true;
    return path;
  }
  std::vector<State> run = walker.search(
      initial, [](const State &) { return false; }, true);
  emit(run);
  path.complete = !run.empty();
  return path;
}

} // namespace strobe
