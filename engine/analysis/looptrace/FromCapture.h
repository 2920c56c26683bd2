// From a `strobe loop` capture to a loop trace: annotates the samples of the loop's thread
// (function per (module, symbol) + instruction ordinal from the captured code, with the call site),
// splits them into iterations the way the capture says, reconstructs (spec 000) and, given a
// single-stepped iteration, measures the accuracy.
#pragma once

#include "analysis/looptrace/Reconstruct.h"
#include "capture/Capture.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strobe {

enum class LoopMode { Time, Count, BasicBlock }; // --mode time|count|bb

struct LoopRebuildOptions {
  LoopMode mode = LoopMode::Time;
  // --annotation context: call sites, and the merged trace walked through the code (CapturePath.h);
  // false is the spec's pure function + ordinal, and its merge is the result.
  bool context = true;
};

// A function as the annotation numbers it.
struct LoopFunction {
  std::string name; // "[module]" for a module's pseudo-function (no symbol covers its pcs)
  uint64_t start = 0;
  bool pseudo = false;
};

// One instruction of the rebuilt iteration, as the report prints it.
struct LoopStep {
  Element element;
  uint32_t samples = 0; // that fell on it (under its call site); shared among its repeats
  bool filled = false;  // never sampled: filled in from the code between sampled instructions
};

struct LoopVerification {
  std::vector<uint64_t> truth; // pcs of the single-stepped iteration
  double accuracy = 0;         // 1 - normalised edit distance, the path's pcs vs truth
  double mergedAccuracy = 0;   // the same for the merged trace alone, before any walk
  double truthCoverage = 0;    // distinct truth pcs that some used sample fell on
};

struct LoopRebuild {
  LoopMode mode = LoopMode::Time;
  LoopTrace trace;            // the merged samples (spec 000)
  std::vector<LoopStep> path; // that trace walked through the code: what the report prints
  bool walked = false;        // false: the path is the merged trace as it is (pure annotation)
  bool pathComplete = false;  // the walk reached the end of the iteration
  size_t offPathSamples = 0;  // samples on instructions the path does not run
  // Instructions of the path whose continuation it leaves out, in path order: calls into code
  // the capture lacks (a function whose code was never copied), stepped over, and indirect jumps
  // in callees (a PLT stub's into a library), taken back to the caller.
  std::vector<uint64_t> steppedOverCalls;
  std::vector<LoopFunction> functions;     // by Element::function
  std::vector<uint64_t> loopInstructions;  // the target's own instructions, ascending
  std::vector<PartialSequence> iterations; // what was reconstructed from
  LoopSplit split = LoopSplit::Marker;
  std::string splitReason;     // why that split (the capture's choice, in words)
  size_t threadSamples = 0;    // samples of the loop's thread
  size_t outsideSamples = 0;   // of those, neither in the target nor in its callees
  size_t droppedSamples = 0;   // in the target but in no complete iteration
  size_t cappedIterations = 0; // left out to stay under the reconstruction's sequence limit
  std::optional<LoopVerification> verification;
};

// Throws LoopTraceError when the capture holds no loop or its function's code.
LoopRebuild rebuildLoop(const Capture &capture, const LoopRebuildOptions &options,
                        const StepTrace *truth);

// The head of the loop, among those of the functions the capture has code for, that holds the
// most samples (its own and its callees'). An outer loop holds all of its inner loop's samples, so
// the deepest loop holding at least 90 % of the best count wins: the loop a user means.
std::optional<uint64_t> hottestLoopHead(const Capture &capture);

} // namespace strobe
