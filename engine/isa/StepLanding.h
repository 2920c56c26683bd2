// Where one single step can land: for a front-end whose debugger judges a step by the pc it ends
// at (LLDB's step of one instruction goes on stepping while the pc is the one it began at).
#pragma once

#include "isa/InstructionInfo.h"
#include "target/Isa.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace strobe {

// Whether a step of `insn` may end at `where`. `returnAddress`: where a return goes (the word on
// top of the stack), if known. Without it, and for indirect jumps and calls and system calls
// (sigreturn goes anywhere), the answer is yes: a caller that must avoid `where` then avoids it.
bool stepMayLandAt(const InstructionInfo &insn, std::optional<uint64_t> returnAddress,
                   uint64_t where);

// Where `insn`, a return, goes when the stack pointer is `sp`: on x86-64 the word on top of the
// stack, which `readMemory(address, size)` reads. nullopt for other instructions, when the word
// cannot be read, and on AArch64, whose ret goes to a register.
std::optional<uint64_t>
returnAddressOf(Isa isa, const InstructionInfo &insn, uint64_t sp,
                const std::function<std::vector<uint8_t>(uint64_t, size_t)> &readMemory);

} // namespace strobe
