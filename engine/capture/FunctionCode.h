// Copies a function's code into the capture, with the source line of each instruction, so that
// annotated disassembly and loop traces work from a saved file with no process.
#pragma once

#include "capture/Capture.h"
#include "target/Target.h"

namespace strobe {

// Does nothing for a function already held, of unknown size, or too large to be worth copying.
// Returns whether the capture holds the function's code afterwards.
bool captureFunctionCode(Target &target, Capture &capture, const SymbolInfo &function);

// The sampler copies the functions samples stopped in; this copies the callers their stacks name
// as well, whose loops hold those samples too (`strobe loop --hottest`).
void captureCallersCode(Target &target, Capture &capture);

} // namespace strobe
