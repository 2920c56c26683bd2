// A rebuilt loop's merged trace walked through the code the capture holds (PathWalk.h): the
// instructions between sampled ones filled in, the samples shared out over the path, and the
// partial sequences whose samples the path does not run reported as contradicting it.
#pragma once

#include "analysis/looptrace/CaptureAnnotator.h"
#include "analysis/looptrace/FromCapture.h"

namespace strobe {

// Fills rebuilt.path, walked, pathComplete and offPathSamples from rebuilt.trace and
// rebuilt.iterations (elements with call sites), and adds the partial sequences with samples off
// the path to the contradictions.
void walkRebuiltLoop(const Capture &capture, CaptureAnnotator &annotator, LoopRebuild &rebuilt);

} // namespace strobe
