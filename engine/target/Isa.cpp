#include "target/Isa.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace strobe {
namespace {

constexpr std::array<std::string_view, 21> kX86_64Regs = {
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp",    "rsp",     "r8",      "r9",      "r10",
    "r11", "r12", "r13", "r14", "r15", "rip", "eflags", "fs_base", "gs_base", "orig_rax"};

constexpr std::array<std::string_view, 34> kAArch64Regs = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10", "x11",
    "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
    "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",  "pc",  "cpsr"};

// The x87 stack registers st0-7 are 10 bytes, in two slots; ftag is the full tag word.
constexpr std::array<ExtRegister, 50> kX86_64Ext = {{
    {"cs", 8},      {"ss", 8},      {"ds", 8},      {"es", 8},      {"fs", 8},      {"gs", 8},
    {"mxcsr", 8},   {"fctrl", 8},   {"fstat", 8},   {"xmm0", 16},   {"xmm1", 16},   {"xmm2", 16},
    {"xmm3", 16},   {"xmm4", 16},   {"xmm5", 16},   {"xmm6", 16},   {"xmm7", 16},   {"xmm8", 16},
    {"xmm9", 16},   {"xmm10", 16},  {"xmm11", 16},  {"xmm12", 16},  {"xmm13", 16},  {"xmm14", 16},
    {"xmm15", 16},  {"ftag", 8},    {"st0", 16},    {"st1", 16},    {"st2", 16},    {"st3", 16},
    {"st4", 16},    {"st5", 16},    {"st6", 16},    {"st7", 16},    {"ymm0h", 16},  {"ymm1h", 16},
    {"ymm2h", 16},  {"ymm3h", 16},  {"ymm4h", 16},  {"ymm5h", 16},  {"ymm6h", 16},  {"ymm7h", 16},
    {"ymm8h", 16},  {"ymm9h", 16},  {"ymm10h", 16}, {"ymm11h", 16}, {"ymm12h", 16}, {"ymm13h", 16},
    {"ymm14h", 16}, {"ymm15h", 16},
}};

constexpr std::array<ExtRegister, 35> kAArch64Ext = {{
    {"v0", 16},  {"v1", 16},  {"v2", 16},  {"v3", 16},  {"v4", 16},  {"v5", 16},  {"v6", 16},
    {"v7", 16},  {"v8", 16},  {"v9", 16},  {"v10", 16}, {"v11", 16}, {"v12", 16}, {"v13", 16},
    {"v14", 16}, {"v15", 16}, {"v16", 16}, {"v17", 16}, {"v18", 16}, {"v19", 16}, {"v20", 16},
    {"v21", 16}, {"v22", 16}, {"v23", 16}, {"v24", 16}, {"v25", 16}, {"v26", 16}, {"v27", 16},
    {"v28", 16}, {"v29", 16}, {"v30", 16}, {"v31", 16}, {"fpsr", 8}, {"fpcr", 8}, {"tpidr", 8},
}};

// System V: rdi, rsi, rdx, rcx, r8, r9; result in rax. AAPCS64: x0-x7; result in x0.
constexpr std::array<unsigned, 6> kX86_64Args = {5, 4, 3, 2, 8, 9};
constexpr std::array<unsigned, 8> kAArch64Args = {0, 1, 2, 3, 4, 5, 6, 7};

const RegisterTable kX86_64{Isa::X86_64, "x86_64",    kX86_64Regs, 16,           7, 6, 20, 0,
                            kX86_64Ext,  kX86_64Args, 0,           std::nullopt, 2};
const RegisterTable kAArch64{Isa::AArch64, "aarch64", kAArch64Regs, 32,           31, 29,
                             std::nullopt, 8,         kAArch64Ext,  kAArch64Args, 0,  30,
                             std::nullopt};

} // namespace

size_t RegisterTable::extSlots() const {
  size_t slots = 0;
  for (const ExtRegister &r : ext)
    slots += r.bytes / 8;
  return slots;
}

std::optional<unsigned> RegisterTable::indexOf(std::string_view name) const {
  const auto it = std::find(regs.begin(), regs.end(), name);
  if (it == regs.end())
    return std::nullopt;
  return static_cast<unsigned>(it - regs.begin());
}

const RegisterTable &registerTable(Isa isa) { return isa == Isa::AArch64 ? kAArch64 : kX86_64; }

std::optional<Isa> isaFromName(std::string_view name) {
  if (name.find("x86-64") != name.npos || name.find("x86_64") != name.npos)
    return Isa::X86_64;
  if (name.find("aarch64") != name.npos || name.find("arm64") != name.npos)
    return Isa::AArch64;
  return std::nullopt;
}

Isa requireIsa(std::string_view name) {
  if (std::optional<Isa> isa = isaFromName(name))
    return *isa;
  throw std::invalid_argument("strobe does not support the architecture '" + std::string(name) +
                              "'; it samples x86-64 and AArch64 programs");
}

} // namespace strobe
