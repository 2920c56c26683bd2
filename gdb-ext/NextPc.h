// Where one instruction can take the pc, so that a single step strobe makes behind GDB's back can
// be shown not to arrive at a breakpoint GDB would have reported.
#pragma once

#include "native/CfiUnwinder.h"
#include "target/Isa.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace strobe::gdb {

class NextPc {
public:
  explicit NextPc(Isa isa);
  ~NextPc();
  NextPc(const NextPc &) = delete;
  NextPc &operator=(const NextPc &) = delete;

  // Whether it answers for any instruction of its ISA.
  bool modelled() const { return handle_ != 0; }
  // Every pc the instruction in `code` (at `pc`) can leave the thread at, given its registers
  // (engine order); nullopt when the instruction is one to leave to GDB: system calls, traps,
  // privileged or undecodable instructions, and every instruction of an ISA this does not model.
  std::optional<std::vector<uint64_t>> candidates(std::span<const uint8_t> code, uint64_t pc,
                                                  const std::vector<uint64_t> &regs,
                                                  const ReadMemory &read);

private:
  size_t handle_ = 0; // csh; 0 when the ISA is not modelled
};

} // namespace strobe::gdb
