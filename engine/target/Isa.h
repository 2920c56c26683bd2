// Per-ISA register tables: the raw registers a sample records, in storage order.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace strobe {

enum class Isa : uint8_t { X86_64 = 1, AArch64 = 2 };

// A register of the ISA's extended state: rarely changing, read only for step traces.
struct ExtRegister {
  // As both debuggers spell it, but for ymmNh, the upper half of AVX's ymmN: GDB's name, which
  // LLDB has only from gdbserver (lldb-server gives the whole ymmN).
  std::string_view name;
  unsigned bytes; // 8 or 16 (a 16-byte register takes two 64-bit slots, low half first)
};

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
  // Index of the register a system call instruction takes the call's number from (x86-64 rax,
  // AArch64 x8).
  unsigned systemCallNumber;
  // Extended state (spec 001's EXT bitmap): segment selectors, SSE, x87 and AVX (the upper
  // halves of ymm0-15) on x86-64; v0-v31, fpsr, fpcr and tpidr on AArch64.
  std::span<const ExtRegister> ext;
  // Registers that carry a function's arguments and its return value, in the platform ABI.
  std::span<const unsigned> argumentRegs;
  unsigned returnReg;
  // Where a function finds its return address at entry: a link register, or the stack top.
  std::optional<unsigned> linkReg; // AArch64 x30; absent on x86-64 ([sp] at entry)
  // Index of the register a rep string instruction counts its iterations down in (x86-64 rcx);
  // absent on AArch64, which has none.
  std::optional<unsigned> repeatCount;

  // Total 64-bit slots of `ext`.
  size_t extSlots() const;
  // Index in regs of the register of this name, as both debuggers spell it; nullopt when the
  // table has none.
  std::optional<unsigned> indexOf(std::string_view name) const;
};

const RegisterTable &registerTable(Isa isa);
std::optional<Isa> isaFromName(std::string_view name); // accepts debugger spellings ("i386:x86-64")
// isaFromName() of what a debugger calls the inferior's architecture, or std::invalid_argument
// that says what strobe samples instead.
Isa requireIsa(std::string_view name);

} // namespace strobe
