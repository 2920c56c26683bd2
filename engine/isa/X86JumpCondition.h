// Whether an x86-64 conditional jump is taken, from the registers before it: so that a single step
// made behind the debugger's back can be known to arrive at one pc, not at either of two.
#pragma once

#include <cstdint>
#include <optional>

namespace strobe {

// For a conditional jump (`instructionId`, Capstone's x86_insn: jcc, jecxz, jrcxz), whether it is
// taken with these rflags and rcx; nullopt for any other instruction (loop and its kin included).
std::optional<bool> x86JumpTaken(unsigned instructionId, uint64_t rflags, uint64_t rcx);

} // namespace strobe
