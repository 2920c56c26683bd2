// The `strobe loop` report: one iteration's instructions in execution order (with the time spent on
// each in time mode), then how far the result can be trusted.
#pragma once

#include "analysis/looptrace/FromCapture.h"
#include "capture/Capture.h"

#include <string>

namespace strobe {

// Partial sequences contradicting the result beyond this share of the iterations mean the loop's
// path changes between iterations (spec 000's reproducibility does not hold)...
inline constexpr double kContradictionTolerance = 0.05;
// ...when there are at least this many: one stray sample among a dozen (a rare branch, a signal
// delivered where a system call returns) is not evidence that the path changes.
inline constexpr size_t kContradictionsForLowConfidence = 2;

bool lowConfidence(const LoopRebuild &rebuilt);

std::string renderLoop(const Capture &capture, const LoopRebuild &rebuilt, bool json);

} // namespace strobe
