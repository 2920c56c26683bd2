// The annotated sample the loop-trace reconstruction works on (spec 000, step S101). The caller
// maps each sampled pc to these numbers (function ids per (module, symbol), ordinals and blocks
// from disassembly); the engine never looks at addresses except to hand them back in the output.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

namespace strobe {

struct LoopTraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where the sampled function was called from (frame 1), so that repeated calls of one function in
// an iteration are told apart and calls, returns and sibling calls can be ordered.
struct CallingContext {
  uint32_t function = 0; // the caller's function id
  uint32_t ordinal = 0;  // the call instruction's ordinal within the caller

  bool operator==(const CallingContext &) const = default;
};

struct Element {
  uint64_t pc = 0;          // only carried through to the output
  uint32_t function = 0;    // caller-assigned id per (module, symbol)
  uint32_t ordinal = 0;     // instruction index within the function (not a byte offset)
  uint32_t block = 0;       // basic block number within the function, in address order
  uint32_t blockOffset = 0; // instruction index within the block
  std::optional<CallingContext> context;

  bool operator==(const Element &) const = default;
};

// The samples of one execution of the target sequence, in time order.
using PartialSequence = std::vector<Element>;

// One entry of a reconstructed trace. In time mode the weight is the number of consecutive samples
// that fell on the instruction (its execution-time weight); in count mode it is always 1.
struct WeightedElement {
  Element element;
  uint32_t weight = 1;
};

} // namespace strobe
