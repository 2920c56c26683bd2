// Spec 000's S101 on a capture: the function (per (module, symbol)), instruction ordinal and basic
// block of an address, from the code the capture holds. A function without code is numbered by the
// rank of its addresses among those given to `note`; an address no symbol covers belongs to its
// module's pseudo-function.
#pragma once

#include "analysis/looptrace/FromCapture.h"
#include "isa/ControlFlow.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace strobe {

struct Place {
  uint32_t function = 0;
  uint32_t ordinal = 0;
  uint32_t block = 0;
  uint32_t blockOffset = 0;
};

class CaptureAnnotator {
public:
  explicit CaptureAnnotator(const Capture &capture);
  ~CaptureAnnotator();

  // The control-flow graph of the coded function starting at `start`, or null.
  const ControlFlowGraph *graph(uint64_t start);
  // The start of the coded function holding `address`, if any.
  std::optional<uint64_t> codedFunctionAt(uint64_t address) const;

  // Announces an address `place` will be asked for, so that uncoded functions can rank them.
  void note(uint64_t address);
  // The instruction holding `address` (a return address minus one names its call).
  Place place(uint64_t address);
  // The element of the instruction at `pc`, run under the call instruction holding `call`, if any.
  Element element(uint64_t pc, std::optional<uint64_t> call);

  const std::vector<LoopFunction> &functions() const { return functions_; }
  // Every (function id, from block, to block) edge of the coded functions numbered so far.
  ControlFlowEdges edges() const;

private:
  struct Key {
    std::string module;
    uint64_t start = 0; // 0: the module's pseudo-function
    auto operator<=>(const Key &) const = default;
  };
  Key keyOf(uint64_t address, std::string &name) const;
  uint32_t idOf(const Key &key, const std::string &name);

  const Capture &capture_;
  std::unique_ptr<InstructionDecoder> decoder_;
  std::map<uint64_t, std::unique_ptr<ControlFlowGraph>> graphs_;
  std::map<uint64_t, std::string> names_; // function start -> symbol name
  std::map<Key, uint32_t> ids_;
  std::vector<LoopFunction> functions_;
  std::map<Key, std::set<uint64_t>> uncoded_; // noted addresses of functions without code
};

} // namespace strobe
