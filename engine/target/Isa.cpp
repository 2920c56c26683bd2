#include "target/Isa.h"

#include <array>

namespace strobe {
namespace {

constexpr std::array<std::string_view, 21> kX86_64Regs = {
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp",    "rsp",     "r8",      "r9",      "r10",
    "r11", "r12", "r13", "r14", "r15", "rip", "eflags", "fs_base", "gs_base", "orig_rax"};

constexpr std::array<std::string_view, 34> kAArch64Regs = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10", "x11",
    "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
    "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",  "pc",  "cpsr"};

const RegisterTable kX86_64{Isa::X86_64, "x86_64", kX86_64Regs, 16, 7, 6, 20};
const RegisterTable kAArch64{Isa::AArch64, "aarch64", kAArch64Regs, 32, 31, 29, std::nullopt};

} // namespace

const RegisterTable &registerTable(Isa isa) { return isa == Isa::AArch64 ? kAArch64 : kX86_64; }

std::optional<Isa> isaFromName(std::string_view name) {
  if (name.find("x86-64") != name.npos || name.find("x86_64") != name.npos)
    return Isa::X86_64;
  if (name.find("aarch64") != name.npos || name.find("arm64") != name.npos)
    return Isa::AArch64;
  return std::nullopt;
}

} // namespace strobe
