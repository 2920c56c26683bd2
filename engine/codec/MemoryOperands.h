// The one thing the diff-record codec needs to know about instructions: which memory an instruction
// accesses. Spec 001 stores memory operand values without their addresses; encoder and decoder both
// recompute the addresses from the instruction bytes and the registers before it ran, so both must
// ask the same model. engine/isa implements it with Capstone; tests use a fake.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace strobe {

struct MemorySlot {
  uint64_t address = 0;
  uint32_t size = 0; // bytes
  bool read = false;
  bool write = false;
};

class MemoryOperandModel {
public:
  virtual ~MemoryOperandModel() = default;
  // The memory the instruction `bytes` at `pc` accesses, computed from the registers BEFORE it
  // ran (registerTable order, followed by the ext slots when the caller has them). nullopt: not
  // predictable (gathers, xsave, rep movs, ...) -> the codec stores such accesses in escape form.
  // Must be deterministic: the decoder calls it with exactly the encoder's arguments.
  virtual std::optional<std::vector<MemorySlot>> slots(std::span<const uint8_t> bytes, uint64_t pc,
                                                       std::span<const uint64_t> regs) = 0;
};

} // namespace strobe
