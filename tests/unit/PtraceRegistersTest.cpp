// The extended registers from the kernel's register sets: the x86-64 XSAVE layout (x87 tags, the
// AVX halves and when they count), checked on hand-made blocks and on a live stopped child.
#include "native/PtraceRegisters.h"
#include "native/ExtendedRegsets.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <vector>

namespace strobe {
namespace {

#if defined(__x86_64__)

// Slots of registerTable(X86_64).ext: cs ss ds es fs gs mxcsr fctrl fstat | xmm0-15 | ftag |
// st0-7 | ymm0h-15h.
constexpr size_t kMxcsr = 6, kFctrl = 7, kFstat = 8, kXmm0 = 9, kFtag = 41, kSt0 = 42, kYmm0h = 58;

std::vector<uint8_t> prstatus() {
  user_regs_struct r{};
  r.cs = 0x33;
  std::vector<uint8_t> bytes(sizeof r);
  std::memcpy(bytes.data(), &r, sizeof r);
  return bytes;
}

template <class T> void put(std::vector<uint8_t> &block, size_t offset, T value) {
  std::memcpy(block.data() + offset, &value, sizeof value);
}

// An XSAVE block: two values on the x87 stack (top 6: st0 = 1.0, st1 = +0), xmm2, ymm5's upper
// half, with XSTATE_BV's bits `features`.
std::vector<uint8_t> xsaveBlock(uint64_t features) {
  std::vector<uint8_t> block(832, 0);
  put<uint16_t>(block, 0, 0x37f);       // fcw
  put<uint16_t>(block, 2, 6u << 11);    // fsw: top 6
  put<uint8_t>(block, 4, 0xc0);         // abridged tags: physical 6 and 7 in use
  put<uint32_t>(block, 24, 0x1f80);     // mxcsr
  put<uint64_t>(block, 32, 1ull << 63); // st0 = 1.0: integer bit, exponent 0x3fff
  put<uint16_t>(block, 40, 0x3fff);
  put<uint16_t>(block, 42, 0xdead);                       // FXSAVE's reserved bytes after st0's 10
  put<uint64_t>(block, 160 + 2 * 16, 0x1111222233334444); // xmm2
  put<uint64_t>(block, 160 + 2 * 16 + 8, 0x5555666677778888);
  put<uint64_t>(block, 512, features);
  put<uint64_t>(block, 576 + 5 * 16, 0xaaaabbbbccccdddd); // ymm5h
  put<uint64_t>(block, 576 + 5 * 16 + 8, 0x9999);
  return block;
}

TEST(PtraceRegisters, XsaveBlockGivesX87SseAndAvxState) {
  std::vector<uint64_t> values;
  ASSERT_TRUE(extendedFromRegsets(Isa::X86_64, prstatus(), xsaveBlock(0b111), values));
  ASSERT_EQ(values.size(), registerTable(Isa::X86_64).extSlots());
  EXPECT_EQ(values[0], 0x33u);
  EXPECT_EQ(values[kMxcsr], 0x1f80u);
  EXPECT_EQ(values[kFctrl], 0x37fu);
  EXPECT_EQ(values[kFstat], 0x3000u);
  EXPECT_EQ(values[kXmm0 + 4], 0x1111222233334444u);
  EXPECT_EQ(values[kXmm0 + 5], 0x5555666677778888u);
  // Physical 0-5 empty (11 each), 6 valid (00: st0 = 1.0), 7 zero (01: st1 = +0).
  EXPECT_EQ(values[kFtag], 0x4fffu);
  EXPECT_EQ(values[kSt0], 1ull << 63);
  EXPECT_EQ(values[kSt0 + 1], 0x3fffu); // without the reserved bytes
  EXPECT_EQ(values[kYmm0h + 10], 0xaaaabbbbccccddddu);
  EXPECT_EQ(values[kYmm0h + 11], 0x9999u);
}

TEST(PtraceRegisters, AvxStateNotInUseIsZero) {
  std::vector<uint64_t> values;
  // XSTATE_BV without the AVX bit: the bytes there are stale, the registers in initial state.
  ASSERT_TRUE(extendedFromRegsets(Isa::X86_64, prstatus(), xsaveBlock(0b011), values));
  EXPECT_EQ(values[kYmm0h + 10], 0u);
  EXPECT_EQ(values[kYmm0h + 11], 0u);
  // Just the FXSAVE image (no XSAVE area): the same, and the rest still read.
  std::vector<uint8_t> fxsave = xsaveBlock(0b111);
  fxsave.resize(512);
  ASSERT_TRUE(extendedFromRegsets(Isa::X86_64, prstatus(), fxsave, values));
  EXPECT_EQ(values.size(), registerTable(Isa::X86_64).extSlots());
  EXPECT_EQ(values[kYmm0h + 10], 0u);
  EXPECT_EQ(values[kXmm0 + 4], 0x1111222233334444u);
  fxsave.resize(511);
  EXPECT_FALSE(extendedFromRegsets(Isa::X86_64, prstatus(), fxsave, values));
  EXPECT_FALSE(extendedFromRegsets(Isa::AArch64, prstatus(), xsaveBlock(0b111), values));
}

TEST(PtraceRegisters, SpecialAndDenormalX87ValuesAreTaggedSpecial) {
  std::vector<uint8_t> block = xsaveBlock(0b111);
  put<uint16_t>(block, 2, 0);   // top 0: st(i) is physical i
  put<uint8_t>(block, 4, 0x0f); // physical 0-3 in use
  put<uint64_t>(block, 32, 1);  // st0: exponent 0, fraction 1: denormal
  put<uint16_t>(block, 40, 0);
  put<uint64_t>(block, 48, 1ull << 63); // st1: exponent 0x7fff: infinity
  put<uint16_t>(block, 56, 0x7fff);
  put<uint64_t>(block, 64, 1); // st2: exponent 1 without the integer bit: unnormal
  put<uint16_t>(block, 72, 1);
  // st3 all zero: zero.
  std::vector<uint64_t> values;
  ASSERT_TRUE(extendedFromRegsets(Isa::X86_64, prstatus(), block, values));
  EXPECT_EQ(values[kFtag], 0xff6au); // 11 11 11 11 | 01 10 10 10
}

// A child that fills ymm1 and two x87 registers, then traps; read with ptrace as strobe reads a
// stopped thread of the process a debugger traces.
TEST(PtraceRegisters, LiveThreadAvxAndX87) {
  if (!__builtin_cpu_supports("avx"))
    GTEST_SKIP() << "this CPU has no AVX";
  alignas(32) static const std::array<uint64_t, 4> lanes = {1, 2, 0x3333, 0x4444};
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    asm volatile("vmovdqa %0, %%ymm1\n\t"
                 "fld1\n\t"
                 "fldz\n\t"
                 "int3"
                 :
                 : "m"(lanes)
                 : "xmm1", "st", "st(1)");
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP) << status;
  std::vector<uint64_t> values;
  const bool read = ptraceExtended(Isa::X86_64, static_cast<uint64_t>(child), values);
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  ASSERT_TRUE(read);
  EXPECT_EQ(values[kXmm0 + 2], 1u);
  EXPECT_EQ(values[kXmm0 + 3], 2u);
  EXPECT_EQ(values[kYmm0h + 2], 0x3333u);
  EXPECT_EQ(values[kYmm0h + 3], 0x4444u);
  // fld1 then fldz: top 6, st0 = +0 (physical 6, zero), st1 = 1.0 (physical 7, valid).
  EXPECT_EQ((values[kFstat] >> 11) & 7, 6u);
  EXPECT_EQ(values[kFtag], 0x1fffu);
  EXPECT_EQ(values[kSt0], 0u);
  EXPECT_EQ(values[kSt0 + 2], 1ull << 63);
  EXPECT_EQ(values[kSt0 + 3], 0x3fffu);
}

#endif

} // namespace
} // namespace strobe
