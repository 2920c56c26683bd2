// Where one step of a hand-assembled instruction at 0x1000 (x86-64 unless said) can land; the
// listings are in the comments.
#include "isa/StepLanding.h"

#include <gtest/gtest.h>

#include <vector>

namespace strobe {
namespace {

constexpr uint64_t kPc = 0x1000;

InstructionInfo decoded(std::vector<uint8_t> bytes, Isa isa = Isa::X86_64) {
  InstructionDecoder decoder(isa);
  std::optional<InstructionInfo> insn = decoder.decode(bytes, kPc);
  if (!insn)
    throw std::runtime_error("not an instruction");
  return *insn;
}

TEST(StepLanding, StraightLineCodeLandsOnTheNextInstruction) {
  const InstructionInfo add = decoded({0x48, 0x83, 0xc0, 0x01}); // add rax, 1
  EXPECT_TRUE(stepMayLandAt(add, std::nullopt, kPc + 4));
  EXPECT_FALSE(stepMayLandAt(add, std::nullopt, kPc));
}

TEST(StepLanding, DirectBranchesLandOnTheirTargets) {
  const InstructionInfo self = decoded({0xeb, 0xfe}); // jmp . (a spin)
  EXPECT_TRUE(stepMayLandAt(self, std::nullopt, kPc));
  EXPECT_FALSE(stepMayLandAt(self, std::nullopt, kPc + 2));
  const InstructionInfo jne = decoded({0x75, 0x10}); // jne .+0x12
  EXPECT_TRUE(stepMayLandAt(jne, std::nullopt, kPc + 0x12));
  EXPECT_TRUE(stepMayLandAt(jne, std::nullopt, kPc + 2));
  EXPECT_FALSE(stepMayLandAt(jne, std::nullopt, kPc));
  const InstructionInfo call = decoded({0xe8, 0x00, 0x01, 0x00, 0x00}); // call .+0x105
  EXPECT_TRUE(stepMayLandAt(call, std::nullopt, kPc + 0x105));
  EXPECT_FALSE(stepMayLandAt(call, std::nullopt, kPc + 5));
}

TEST(StepLanding, ARepStringInstructionMayStayPut) {
  const InstructionInfo movs = decoded({0xf3, 0xa4}); // rep movsb
  EXPECT_TRUE(stepMayLandAt(movs, std::nullopt, kPc));
  EXPECT_TRUE(stepMayLandAt(movs, std::nullopt, kPc + 2));
  EXPECT_FALSE(stepMayLandAt(movs, std::nullopt, kPc + 4));
}

TEST(StepLanding, AReturnLandsWhereTheStackSaysOrAnywhere) {
  const InstructionInfo ret = decoded({0xc3}); // ret
  EXPECT_TRUE(stepMayLandAt(ret, 0x4000, 0x4000));
  EXPECT_FALSE(stepMayLandAt(ret, 0x4000, kPc + 1));
  EXPECT_TRUE(stepMayLandAt(ret, std::nullopt, kPc + 1));
}

TEST(StepLanding, AnX86ReturnGoesToTheWordOnTopOfTheStack) {
  constexpr uint64_t kSp = 0x7ff0;
  std::vector<uint64_t> asked;
  auto stack = [&](uint64_t address, size_t size) {
    asked.push_back(address);
    return address == kSp && size == 8 ? std::vector<uint8_t>{0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0}
                                       : std::vector<uint8_t>{};
  };
  EXPECT_EQ(returnAddressOf(Isa::X86_64, decoded({0xc3}), kSp, stack), 0x12345678u); // ret
  EXPECT_EQ(returnAddressOf(Isa::X86_64, decoded({0xc3}), kSp + 8, stack), std::nullopt);
  EXPECT_EQ(asked, (std::vector<uint64_t>{kSp, kSp + 8}));
  asked.clear();
  // Not a return: nothing is read.
  EXPECT_EQ(returnAddressOf(Isa::X86_64, decoded({0x48, 0x83, 0xc0, 0x01}), kSp, stack),
            std::nullopt);
  // AArch64's ret goes to x30, whatever the stack holds.
  const InstructionInfo ret = decoded({0xc0, 0x03, 0x5f, 0xd6}, Isa::AArch64); // ret
  ASSERT_EQ(ret.kind, BranchKind::Return);
  EXPECT_EQ(returnAddressOf(Isa::AArch64, ret, kSp, stack), std::nullopt);
  EXPECT_TRUE(asked.empty());
}

TEST(StepLanding, IndirectBranchesAndSystemCallsMayLandAnywhere) {
  for (const std::vector<uint8_t> &bytes : {std::vector<uint8_t>{0xff, 0xe0},    // jmp rax
                                            std::vector<uint8_t>{0xff, 0xd0},    // call rax
                                            std::vector<uint8_t>{0x0f, 0x05}}) { // syscall
    const InstructionInfo insn = decoded(bytes);
    EXPECT_TRUE(stepMayLandAt(insn, std::nullopt, kPc));
    EXPECT_TRUE(stepMayLandAt(insn, std::nullopt, 0x123456));
  }
}

} // namespace
} // namespace strobe
