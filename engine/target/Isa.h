// Per-ISA register tables: the raw registers a sample records, in storage order.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace strobe {

enum class Isa : uint8_t { X86_64 = 1, AArch64 = 2 };

struct RegisterTable {
  Isa isa;
  std::string_view name;                  // "x86_64", "aarch64"
  std::span<const std::string_view> regs; // raw register names as both debuggers spell them
  unsigned pc;                            // index of the program counter in regs
  unsigned sp;                            // index of the stack pointer
  unsigned fp;                            // index of the frame pointer
  // Index of the register that tells a thread was stopped inside a system call (x86-64 orig_rax
  // holds the syscall number there and -1 elsewhere); absent where the ISA has no such register.
  std::optional<unsigned> syscallNr;
};

const RegisterTable &registerTable(Isa isa);
std::optional<Isa> isaFromName(std::string_view name); // accepts debugger spellings ("i386:x86-64")

} // namespace strobe
