// From a reconstructed loop trace to the path one iteration executes, instruction by instruction.
//
// Samples never see every instruction: timer interrupts land after long-latency instructions far
// more often than after the cheap ones beside them, and a short iteration gets at most one sample,
// so the merged trace has holes and, when each partial sequence is one sample, no order of its own
// either. A debugger has the code. The walk follows the control-flow graphs from the loop head (or
// the function's entry) through every call it can follow, and only decides what the code leaves
// open — which way a conditional branch goes, where an indirect call leads — from the samples:
// the shortest way to the next sampled instruction of the reconstructed trace, in its order, and
// the callee that samples under an indirect call site ran in. Instructions the samples never saw
// are filled in; sampled instructions the path cannot reach in order are left out of it (their
// samples fall off the path, which is how a path that changes between iterations shows). Calls
// into code without a graph are stepped over. An indirect jump in a callee is taken for a tail
// call (a PLT stub's into a library): to the function samples under the call ran in, else back to
// the caller; one in the loop's own frame ends the walk.
#pragma once

#include "isa/ControlFlow.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace strobe {

// An instruction as executed: where, and under which call (the call instruction's address in the
// caller; none in the loop's own frame).
struct PathPoint {
  uint64_t pc = 0;
  std::optional<uint64_t> callSite;

  bool operator==(const PathPoint &) const = default;
};

struct PathWalkRequest {
  uint64_t start = 0;         // the loop head, or the entry of a function run over and over
  bool wholeFunction = false; // ends at the function's return; a loop ends back at `start`
  std::vector<uint64_t> loopAddresses; // a loop's instructions: leaving them leaves the loop
  // Call sites (their address) whose callee the code does not tell, and the entry of the function
  // the samples saw them run: an indirect call's callee, or where a direct call's callee jumps on
  // to (a PLT stub's jump into a library, which the walk then follows as a tail call).
  std::map<uint64_t, uint64_t> indirectCallees;
  // Calls deeper than this many frames below the loop's are stepped over.
  size_t maxDepth = 8;
};

struct WalkedPath {
  std::vector<PathPoint> steps;
  std::vector<size_t> unreachedPoints; // indices of points the path could not reach in order
  bool complete = false; // reached the end of the iteration; if not, `steps` is the start of it
};

// The graph of the function holding an address, or null when the capture has no code for it.
using GraphLookup = std::function<const ControlFlowGraph *(uint64_t address)>;

// `points` are the sampled instructions in the reconstructed order. A point without a call site
// matches the instruction under any call.
WalkedPath walkPath(const PathWalkRequest &request, std::span<const PathPoint> points,
                    const GraphLookup &graphs);

} // namespace strobe
