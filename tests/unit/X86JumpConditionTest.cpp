#include "isa/X86JumpCondition.h"

#include <capstone/capstone.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <vector>

namespace strobe {
namespace {

// Capstone's id of the instruction in `bytes`, decoded in 64-bit mode.
unsigned idOf(std::vector<uint8_t> bytes) {
  csh handle = 0;
  EXPECT_EQ(cs_open(CS_ARCH_X86, CS_MODE_64, &handle), CS_ERR_OK);
  cs_insn *insn = nullptr;
  const size_t count = cs_disasm(handle, bytes.data(), bytes.size(), 0x1000, 1, &insn);
  const unsigned id = count == 1 ? insn->id : unsigned{X86_INS_INVALID};
  cs_free(insn, count);
  cs_close(&handle);
  return id;
}

#if defined(__x86_64__)
// The rflags this CPU leaves after `cmp b, a` (a - b).
uint64_t flagsOfCompare(uint64_t a, uint64_t b) {
  uint64_t flags;
  asm volatile("cmpq %[b], %[a]\n\tpushfq\n\tpopq %[flags]"
               : [flags] "=r"(flags)
               : [a] "r"(a), [b] "r"(b)
               : "cc");
  return flags;
}

// Each jcc (opcode 0x70 + condition), judged on the flags of real comparisons against what the
// comparison means: the CPU's flags, not this file's reading of them, are the input.
TEST(X86JumpCondition, EachConditionalJumpFollowsTheComparisonItTests) {
  using Meaning = std::function<bool(uint64_t, uint64_t)>;
  auto s = [](uint64_t v) { return static_cast<int64_t>(v); };
  auto overflows = [s](uint64_t a, uint64_t b) {
    int64_t r;
    return __builtin_sub_overflow(s(a), s(b), &r);
  };
  auto evenParity = [](uint64_t a, uint64_t b) { return std::popcount((a - b) & 0xff) % 2 == 0; };
  const std::vector<Meaning> meanings = {
      [&](uint64_t a, uint64_t b) { return overflows(a, b); },   // jo
      [&](uint64_t a, uint64_t b) { return !overflows(a, b); },  // jno
      [](uint64_t a, uint64_t b) { return a < b; },              // jb
      [](uint64_t a, uint64_t b) { return a >= b; },             // jae
      [](uint64_t a, uint64_t b) { return a == b; },             // je
      [](uint64_t a, uint64_t b) { return a != b; },             // jne
      [](uint64_t a, uint64_t b) { return a <= b; },             // jbe
      [](uint64_t a, uint64_t b) { return a > b; },              // ja
      [s](uint64_t a, uint64_t b) { return s(a - b) < 0; },      // js
      [s](uint64_t a, uint64_t b) { return s(a - b) >= 0; },     // jns
      [&](uint64_t a, uint64_t b) { return evenParity(a, b); },  // jp
      [&](uint64_t a, uint64_t b) { return !evenParity(a, b); }, // jnp
      [s](uint64_t a, uint64_t b) { return s(a) < s(b); },       // jl
      [s](uint64_t a, uint64_t b) { return s(a) >= s(b); },      // jge
      [s](uint64_t a, uint64_t b) { return s(a) <= s(b); },      // jle
      [s](uint64_t a, uint64_t b) { return s(a) > s(b); },       // jg
  };
  const std::vector<uint64_t> values = {0,
                                        1,
                                        2,
                                        7,
                                        0x7f,
                                        0x80,
                                        0xff,
                                        0x100,
                                        0x7fffffffffffffff,
                                        0x8000000000000000,
                                        ~uint64_t{0},
                                        ~uint64_t{0} - 6};
  for (unsigned condition = 0; condition < 16; ++condition) {
    const unsigned id = idOf({static_cast<uint8_t>(0x70 + condition), 0x00});
    for (uint64_t a : values)
      for (uint64_t b : values)
        EXPECT_EQ(x86JumpTaken(id, flagsOfCompare(a, b), 0), meanings[condition](a, b))
            << "condition " << condition << ", cmp " << std::hex << b << ", " << a;
  }
}
#endif

TEST(X86JumpCondition, JumpsOnACountRegisterReadItsWidth) {
  const unsigned jrcxz = idOf({0xe3, 0x00}), jecxz = idOf({0x67, 0xe3, 0x00});
  EXPECT_EQ(x86JumpTaken(jrcxz, 0, 0), true);
  EXPECT_EQ(x86JumpTaken(jrcxz, 0, uint64_t{1} << 32), false);
  EXPECT_EQ(x86JumpTaken(jecxz, 0, uint64_t{1} << 32), true);
  EXPECT_EQ(x86JumpTaken(jecxz, 0, 1), false);
}

TEST(X86JumpCondition, OtherInstructionsHaveNoCondition) {
  for (const std::vector<uint8_t> &bytes :
       {std::vector<uint8_t>{0xeb, 0x00}, {0xe8, 0, 0, 0, 0}, {0xe2, 0x00}, {0x90}, {0xc3}})
    EXPECT_EQ(x86JumpTaken(idOf(bytes), ~uint64_t{0}, 0), std::nullopt) << int{bytes[0]};
}

} // namespace
} // namespace strobe
