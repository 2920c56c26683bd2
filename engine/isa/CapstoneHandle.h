// A Capstone handle for one ISA, with operand details on, and the one instruction buffer it
// decodes into: what the disassembler (report text) and the instruction decoder (operands,
// branches) both need.
#pragma once

#include "target/Isa.h"

#include <cstdint>
#include <span>

struct cs_insn;

namespace strobe {

class CapstoneHandle {
public:
  explicit CapstoneHandle(Isa isa); // throws std::runtime_error when Capstone cannot open the ISA
  ~CapstoneHandle();
  CapstoneHandle(const CapstoneHandle &) = delete;
  CapstoneHandle &operator=(const CapstoneHandle &) = delete;

  // The instruction at the start of `bytes`, which sit at `address`, decoded into the handle's
  // buffer (valid until the next call); null when the bytes do not begin with one.
  const cs_insn *decode(std::span<const uint8_t> bytes, uint64_t address);

private:
  size_t handle_ = 0; // csh
  cs_insn *insn_ = nullptr;
};

} // namespace strobe
