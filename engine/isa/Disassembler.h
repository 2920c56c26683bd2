// A thin owner of a Capstone handle: decodes one instruction at a time for reports (annotate).
#pragma once

#include "isa/CapstoneHandle.h"
#include "target/Isa.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace strobe {

struct Instruction {
  uint64_t address = 0;
  unsigned length = 0;
  std::string text; // mnemonic and operands in the ISA's usual syntax (Intel for x86-64)
  // Destination of a direct jump or call, so a report can name the function it enters.
  std::optional<uint64_t> branchTarget;
};

class Disassembler {
public:
  explicit Disassembler(Isa isa); // throws std::runtime_error when Capstone cannot open the ISA

  // The instruction at the start of `bytes`, which sit at `address`; nullopt when the bytes do
  // not begin with a valid instruction (data, a truncated buffer).
  std::optional<Instruction> decode(std::span<const uint8_t> bytes, uint64_t address);

private:
  Isa isa_;
  CapstoneHandle capstone_;
};

} // namespace strobe
