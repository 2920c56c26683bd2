// Instruction decoding: branch kinds and targets, memory operands and the addresses they resolve
// to from pre-execution registers. The bytes were assembled with GNU as (x86-64, Intel syntax)
// and aarch64-linux-gnu-as; every expected address is worked out by hand from the instruction's
// definition and the register values given.
#include "isa/InstructionInfo.h"
#include "isa/CapstoneGaps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

namespace strobe {
namespace {

unsigned reg(Isa isa, std::string_view name) {
  const std::optional<unsigned> index = registerTable(isa).indexOf(name);
  EXPECT_TRUE(index) << name;
  return index.value_or(0);
}

std::vector<uint64_t> regs(Isa isa,
                           std::initializer_list<std::pair<std::string_view, uint64_t>> v) {
  std::vector<uint64_t> out(registerTable(isa).regs.size(), 0);
  for (const auto &[name, value] : v)
    out[reg(isa, name)] = value;
  return out;
}

// AArch64 instructions as the words objdump prints, stored little-endian.
std::vector<uint8_t> words(std::initializer_list<uint32_t> ws) {
  std::vector<uint8_t> out;
  for (uint32_t w : ws)
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  return out;
}

// model.slots(), the codec's interface; where the model also has formulas for the instruction
// (the codec evaluates them in loops instead of asking again), they must give the same slots.
std::optional<std::vector<MemorySlot>> slotsChecked(MemoryOperandModel &model,
                                                    std::span<const uint8_t> bytes, uint64_t pc,
                                                    const std::vector<uint64_t> &regs) {
  std::optional<std::vector<MemorySlot>> slots = model.slots(bytes, pc, regs);
  AccessFormulas formulas;
  if (model.formulas(bytes, pc, formulas)) {
    EXPECT_TRUE(slots.has_value());
    if (slots && slots->size() == formulas.size())
      for (size_t k = 0; k < formulas.size(); ++k) {
        const AccessFormula &f = formulas[k];
        const MemorySlot &s = (*slots)[k];
        EXPECT_EQ(f.address(regs), s.address) << "formula " << k;
        EXPECT_EQ(f.size, s.size) << "formula " << k;
        EXPECT_EQ(f.read, s.read) << "formula " << k;
        EXPECT_EQ(f.write, s.write) << "formula " << k;
      }
    else
      ADD_FAILURE() << "formulas for other slots than predicted";
  }
  return slots;
}

MemorySlot slot(uint64_t address, uint32_t size, bool read, bool write) {
  return {address, size, read, write};
}

void expectSlots(const std::optional<std::vector<MemorySlot>> &got,
                 std::initializer_list<MemorySlot> want) {
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), want.size());
  size_t i = 0;
  for (const MemorySlot &w : want) {
    const MemorySlot &g = (*got)[i++];
    EXPECT_EQ(g.address, w.address)
        << "slot " << i - 1 << std::hex << " got 0x" << g.address << " want 0x" << w.address;
    EXPECT_EQ(g.size, w.size) << "slot " << i - 1;
    EXPECT_EQ(g.read, w.read) << "slot " << i - 1;
    EXPECT_EQ(g.write, w.write) << "slot " << i - 1;
  }
}

class InstructionInfoX86Test : public ::testing::Test {
protected:
  static constexpr uint64_t kPc = 0x401000;
  static constexpr uint64_t kSp = 0x7ffe0000;
  InstructionDecoder decoder{Isa::X86_64};

  std::optional<std::vector<MemorySlot>>
  slots(std::vector<uint8_t> bytes,
        std::initializer_list<std::pair<std::string_view, uint64_t>> values = {}) {
    std::vector<uint64_t> r = regs(Isa::X86_64, values);
    r[reg(Isa::X86_64, "rsp")] = r[reg(Isa::X86_64, "rsp")] ? r[reg(Isa::X86_64, "rsp")] : kSp;
    // Through the interface the codec uses.
    return slotsChecked(decoder, bytes, kPc, r);
  }
  InstructionInfo decode(std::vector<uint8_t> bytes, uint64_t pc = kPc) {
    std::optional<InstructionInfo> info = decoder.decode(bytes, pc);
    EXPECT_TRUE(info.has_value());
    return info.value_or(InstructionInfo{});
  }
};

TEST_F(InstructionInfoX86Test, BaseIndexScaleDisplacement) {
  // mov rax, qword ptr [rbx + rcx*4 + 0x10]: 0x1000 + 3*4 + 0x10
  expectSlots(slots({0x48, 0x8b, 0x44, 0x8b, 0x10}, {{"rbx", 0x1000}, {"rcx", 3}}),
              {slot(0x101c, 8, true, false)});
  // mov dword ptr [rdi + r8*8 - 0x20], edx: 0x2000 + 2*8 - 0x20
  expectSlots(slots({0x42, 0x89, 0x54, 0xc7, 0xe0}, {{"rdi", 0x2000}, {"r8", 2}}),
              {slot(0x1ff0, 4, false, true)});
  InstructionInfo info = decode({0x42, 0x89, 0x54, 0xc7, 0xe0});
  EXPECT_EQ(info.length, 5u);
  ASSERT_EQ(info.memory.size(), 1u);
  EXPECT_EQ(info.memory[0].base, reg(Isa::X86_64, "rdi"));
  EXPECT_EQ(info.memory[0].index, reg(Isa::X86_64, "r8"));
  EXPECT_EQ(info.memory[0].scale, 8u);
  EXPECT_EQ(info.memory[0].displacement, -0x20);
}

TEST_F(InstructionInfoX86Test, RipRelativeUsesTheNextInstruction) {
  // mov rax, qword ptr [rip + 0x100], 7 bytes at 0x401000: 0x401007 + 0x100
  expectSlots(slots({0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00}), {slot(0x401107, 8, true, false)});
  // jmp qword ptr [rip + 0x20], 6 bytes: reads the pointer at 0x401006 + 0x20
  expectSlots(slots({0xff, 0x25, 0x20, 0x00, 0x00, 0x00}), {slot(0x401026, 8, true, false)});
}

TEST_F(InstructionInfoX86Test, SegmentBasesAreAdded) {
  // mov rax, qword ptr fs:[0x28] (the stack protector canary)
  expectSlots(
      slots({0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00}, {{"fs_base", 0x7ffff7d8a740}}),
      {slot(0x7ffff7d8a768, 8, true, false)});
  // mov rax, qword ptr fs:[rbx]
  expectSlots(slots({0x64, 0x48, 0x8b, 0x03}, {{"fs_base", 0x10000}, {"rbx", 0x40}}),
              {slot(0x10040, 8, true, false)});
  // mov rax, qword ptr gs:[0x10]
  expectSlots(slots({0x65, 0x48, 0x8b, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00},
                    {{"gs_base", 0x20000}, {"fs_base", 0x90000}}),
              {slot(0x20010, 8, true, false)});
}

TEST_F(InstructionInfoX86Test, AddressComesFromThePreExecutionRegisters) {
  // mov rax, qword ptr [rax]: rax is overwritten, the address is the old rax
  expectSlots(slots({0x48, 0x8b, 0x00}, {{"rax", 0x5000}}), {slot(0x5000, 8, true, false)});
}

TEST_F(InstructionInfoX86Test, ImplicitStackAccesses) {
  // push rax: writes [rsp - 8]
  expectSlots(slots({0x50}), {slot(kSp - 8, 8, false, true)});
  // pop rbx: reads [rsp]
  expectSlots(slots({0x5b}), {slot(kSp, 8, true, false)});
  // call rel32: writes the return address at [rsp - 8]
  expectSlots(slots({0xe8, 0x00, 0x00, 0x00, 0x00}), {slot(kSp - 8, 8, false, true)});
  // ret and repz ret: read the return address at [rsp]
  expectSlots(slots({0xc3}), {slot(kSp, 8, true, false)});
  expectSlots(slots({0xf3, 0xc3}), {slot(kSp, 8, true, false)});
  // ret 8: still reads [rsp]
  expectSlots(slots({0xc2, 0x08, 0x00}), {slot(kSp, 8, true, false)});
  // leave: mov rsp, rbp; pop rbp -> reads [rbp]
  expectSlots(slots({0xc9}, {{"rbp", 0x7ffe0100}}), {slot(0x7ffe0100, 8, true, false)});
  // pushfq / popfq
  expectSlots(slots({0x9c}), {slot(kSp - 8, 8, false, true)});
  expectSlots(slots({0x9d}), {slot(kSp, 8, true, false)});
  // push ax (operand-size prefix): two bytes at [rsp - 2]
  expectSlots(slots({0x66, 0x50}), {slot(kSp - 2, 2, false, true)});
  // push 5
  expectSlots(slots({0x6a, 0x05}), {slot(kSp - 8, 8, false, true)});
}

TEST_F(InstructionInfoX86Test, ExplicitAndImplicitTogether) {
  // push qword ptr [rax]: reads [rax], writes [rsp - 8]
  expectSlots(slots({0xff, 0x30}, {{"rax", 0x6000}}),
              {slot(0x6000, 8, true, false), slot(kSp - 8, 8, false, true)});
  // pop qword ptr [rsp + 8]: the destination address uses rsp after the pop (rsp + 8 + 8)
  expectSlots(slots({0x8f, 0x44, 0x24, 0x08}),
              {slot(kSp + 16, 8, false, true), slot(kSp, 8, true, false)});
  // call qword ptr [rax + 8]: reads the target, pushes the return address
  expectSlots(slots({0xff, 0x50, 0x08}, {{"rax", 0x6000}}),
              {slot(0x6008, 8, true, false), slot(kSp - 8, 8, false, true)});
}

TEST_F(InstructionInfoX86Test, ReadModifyWriteAndCorrectedAccesses) {
  // add dword ptr [rax], 1
  expectSlots(slots({0x83, 0x00, 0x01}, {{"rax", 0x7000}}), {slot(0x7000, 4, true, true)});
  // cmp qword ptr [rax], 1
  expectSlots(slots({0x48, 0x83, 0x38, 0x01}, {{"rax", 0x7000}}), {slot(0x7000, 8, true, false)});
  // cmpxchg16b xmmword ptr [rdi] (Capstone 4 calls it a read)
  expectSlots(slots({0x48, 0x0f, 0xc7, 0x0f}, {{"rdi", 0x7010}}), {slot(0x7010, 16, true, true)});
  // fstp qword ptr [rax] (Capstone 4 calls it a read)
  expectSlots(slots({0xdd, 0x18}, {{"rax", 0x7020}}), {slot(0x7020, 8, false, true)});
  // Stores from vector registers (Capstone 4 calls them reads)
  expectSlots(slots({0x0f, 0x11, 0x47, 0x28}, {{"rdi", 0x7100}}),
              {slot(0x7128, 16, false, true)}); // movups xmmword ptr [rdi + 0x28], xmm0
  expectSlots(slots({0x62, 0xe1, 0xfe, 0x48, 0x7f, 0x07}, {{"rdi", 0x7200}}),
              {slot(0x7200, 64, false, true)}); // vmovdqu64 zmmword ptr [rdi], zmm16
  expectSlots(slots({0x62, 0xf1, 0x7d, 0x28, 0x7f, 0x44, 0x24, 0x02}),
              {slot(kSp + 0x40, 32, false, true)}); // vmovdqa32 [rsp + 0x40], ymm0 (disp8 * 32)
  expectSlots(slots({0x0f, 0xc3, 0x18}, {{"rax", 0x7300}}),
              {slot(0x7300, 4, false, true)}); // movnti dword ptr [rax], ebx
  // ... but a load into a vector register stays a load
  expectSlots(slots({0x0f, 0x10, 0x47, 0x28}, {{"rdi", 0x7100}}),
              {slot(0x7128, 16, true, false)}); // movups xmm0, xmmword ptr [rdi + 0x28]
  // fld tbyte ptr [rax]: ten bytes
  expectSlots(slots({0xdb, 0x28}, {{"rax", 0x7020}}), {slot(0x7020, 10, true, false)});
}

TEST_F(InstructionInfoX86Test, StringInstructions) {
  // movsb: writes [rdi], reads [rsi]
  expectSlots(slots({0xa4}, {{"rdi", 0x8000}, {"rsi", 0x9000}}),
              {slot(0x8000, 1, false, true), slot(0x9000, 1, true, false)});
  // rep movsb, rep stosq, repne scasb: the count decides what they touch
  EXPECT_FALSE(slots({0xf3, 0xa4}).has_value());
  EXPECT_TRUE(decode({0xf3, 0xa4}).unusual);
  EXPECT_TRUE(decode({0xf3, 0xa4}).repeated);
  EXPECT_TRUE(decode({0xf3, 0x48, 0xab}).unusual);
  EXPECT_TRUE(decode({0xf2, 0xae}).unusual);
  EXPECT_FALSE(decode({0xa4}).repeated);
  // movsd xmm0, qword ptr [rax] carries an f2 prefix but is no string instruction
  InstructionInfo sse = decode({0xf2, 0x0f, 0x10, 0x00});
  EXPECT_FALSE(sse.unusual);
  ASSERT_EQ(sse.memory.size(), 1u);
  EXPECT_EQ(sse.memory[0].size, 8u);
}

TEST_F(InstructionInfoX86Test, RepeatedStringsOneIterationPerStep) {
  InstructionDecoder stepping(Isa::X86_64, RepeatedStrings::OneIterationPerStep);
  auto step = [&](std::vector<uint8_t> bytes,
                  std::initializer_list<std::pair<std::string_view, uint64_t>> values) {
    return stepping.slots(bytes, kPc, regs(Isa::X86_64, values));
  };
  // rep movsb with 5 left: this step copies one byte from [rsi] to [rdi]
  expectSlots(step({0xf3, 0xa4}, {{"rcx", 5}, {"rdi", 0x8000}, {"rsi", 0x9000}}),
              {slot(0x8000, 1, false, true), slot(0x9000, 1, true, false)});
  // rep movsb with nothing left: no access at all
  expectSlots(step({0xf3, 0xa4}, {{"rcx", 0}, {"rdi", 0x8000}, {"rsi", 0x9000}}), {});
  // rep stosq: one quadword at [rdi]
  expectSlots(step({0xf3, 0x48, 0xab}, {{"rcx", 2}, {"rdi", 0x8000}}),
              {slot(0x8000, 8, false, true)});
  // repne scasb: reads one byte at [rdi]
  expectSlots(step({0xf2, 0xae}, {{"rcx", 9}, {"rdi", 0x8100}}), {slot(0x8100, 1, true, false)});
  // Other unusual instructions stay unpredictable
  EXPECT_FALSE(step({0x0f, 0xae, 0x20}, {{"rcx", 1}}).has_value()); // xsave [rax]
}

TEST_F(InstructionInfoX86Test, UnusualAccesses) {
  EXPECT_TRUE(decode({0x0f, 0xae, 0x20}).unusual);                   // xsave [rax]
  EXPECT_TRUE(decode({0xc4, 0xe2, 0x6d, 0x90, 0x04, 0x88}).unusual); // vpgatherdd
  EXPECT_TRUE(decode({0x48, 0x0f, 0xa3, 0x18}).unusual);             // bt [rax], rbx
  EXPECT_TRUE(decode({0xd7}).unusual);                               // xlatb
  EXPECT_TRUE(decode({0xc4, 0xe2, 0x75, 0x2c, 0x00}).unusual);       // vmaskmovps
  EXPECT_TRUE(decode({0x62, 0xf1, 0x7e, 0x49, 0x6f, 0x00}).unusual); // vmovdqu32 zmm0{k1}
  // bt [rax], 3 stays inside the operand
  expectSlots(slots({0x48, 0x0f, 0xba, 0x20, 0x03}, {{"rax", 0x100}}),
              {slot(0x100, 8, true, false)});
}

TEST_F(InstructionInfoX86Test, AddressOnlyOperandsAreNotAccesses) {
  expectSlots(slots({0x48, 0x8d, 0x43, 0x08}), {});       // lea rax, [rbx + 8]
  expectSlots(slots({0x66, 0x0f, 0x1f, 0x04, 0x00}), {}); // nop word ptr [rax + rax]
  expectSlots(slots({0x0f, 0x18, 0x08}), {});             // prefetcht0 [rax]
  expectSlots(slots({0xf3, 0x0f, 0x1e, 0xfa}), {});       // endbr64
  EXPECT_EQ(decode({0xf3, 0x0f, 0x1e, 0xfa}).length, 4u);
}

TEST_F(InstructionInfoX86Test, AddressSizePrefixAndAbsoluteAddress) {
  // mov eax, dword ptr [ebx]: the address is the low 32 bits of rbx
  expectSlots(slots({0x67, 0x8b, 0x03}, {{"rbx", 0xffffffff00001000}}),
              {slot(0x1000, 4, true, false)});
  // movabs al, byte ptr [0x1234567812345678]
  expectSlots(slots({0xa0, 0x78, 0x56, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12}),
              {slot(0x1234567812345678, 1, true, false)});
}

TEST_F(InstructionInfoX86Test, BranchKindsAndTargets) {
  auto kind = [&](std::vector<uint8_t> bytes) { return decode(std::move(bytes)).kind; };
  InstructionInfo call = decode({0xe8, 0x10, 0x00, 0x00, 0x00});
  EXPECT_EQ(call.kind, BranchKind::Call);
  EXPECT_EQ(call.target, kPc + 5 + 0x10);
  InstructionInfo je = decode({0x0f, 0x84, 0x10, 0x00, 0x00, 0x00});
  EXPECT_EQ(je.kind, BranchKind::ConditionalJump);
  EXPECT_EQ(je.target, kPc + 6 + 0x10);
  InstructionInfo self = decode({0xeb, 0xfe}); // jmp to itself
  EXPECT_EQ(self.kind, BranchKind::Jump);
  EXPECT_EQ(self.target, kPc);
  InstructionInfo loop = decode({0xe2, 0x0e}); // loop .+0x10
  EXPECT_EQ(loop.kind, BranchKind::ConditionalJump);
  EXPECT_EQ(loop.target, kPc + 0x10);
  EXPECT_EQ(decode({0xe3, 0x0e}).kind, BranchKind::ConditionalJump); // jrcxz
  EXPECT_EQ(kind({0xff, 0xe0}), BranchKind::IndirectJump);           // jmp rax
  EXPECT_EQ(kind({0xff, 0x25, 0x20, 0x00, 0x00, 0x00}), BranchKind::IndirectJump);
  EXPECT_EQ(kind({0xff, 0xd0}), BranchKind::IndirectCall);       // call rax
  EXPECT_EQ(kind({0xff, 0x50, 0x08}), BranchKind::IndirectCall); // call [rax + 8]
  EXPECT_EQ(kind({0xc3}), BranchKind::Return);
  EXPECT_EQ(kind({0xf3, 0xc3}), BranchKind::Return);
  EXPECT_EQ(kind({0x0f, 0x05}), BranchKind::Syscall);
  EXPECT_EQ(kind({0xcd, 0x80}), BranchKind::Syscall);
  EXPECT_EQ(kind({0xcc}), BranchKind::None); // int3
  EXPECT_EQ(kind({0x48, 0x8b, 0x00}), BranchKind::None);
  EXPECT_FALSE(decode({0xff, 0xe0}).target.has_value());
}

TEST_F(InstructionInfoX86Test, NewBytesAtACachedAddressAreDecodedAfresh) {
  expectSlots(slots({0x50}), {slot(kSp - 8, 8, false, true)}); // push rax
  expectSlots(slots({0x5b}), {slot(kSp, 8, true, false)});     // pop rbx, same address
  // A longer instruction whose first byte matches the cached one
  expectSlots(slots({0xff, 0x30}, {{"rax", 0x6000}}),
              {slot(0x6000, 8, true, false), slot(kSp - 8, 8, false, true)}); // push [rax]
  expectSlots(slots({0xff, 0xe0}), {});                                       // jmp rax
  EXPECT_EQ(decode({0xff, 0xe0}).kind, BranchKind::IndirectJump);
}

TEST_F(InstructionInfoX86Test, UndecodableBytes) {
  EXPECT_FALSE(
      decoder.decode(std::vector<uint8_t>{0x06}, kPc).has_value()); // push es: not in 64-bit
  EXPECT_FALSE(decoder.decode(std::vector<uint8_t>{0x48, 0x8b}, kPc).has_value()); // truncated
  MemoryOperandModel &model = decoder;
  EXPECT_FALSE(model.slots(std::vector<uint8_t>{0x06}, kPc, {}).has_value());
}

TEST_F(InstructionInfoX86Test, VexAndEvexThatCapstone4Lacks) {
  // kmovd eax, k0: registers only
  InstructionInfo kmov = decode({0xc5, 0xfb, 0x93, 0xc0});
  EXPECT_EQ(kmov.length, 4u);
  EXPECT_EQ(kmov.kind, BranchKind::None);
  EXPECT_FALSE(kmov.unusual);
  expectSlots(slots({0xc5, 0xfb, 0x93, 0xc0}), {});
  // vpcmpeqb k0, ymm16, ymmword ptr [rdi]: a memory operand we cannot size -> unusual
  InstructionInfo cmp = decode({0x62, 0xf3, 0x7d, 0x20, 0x3f, 0x07, 0x00, 0xc5});
  EXPECT_EQ(cmp.length, 7u);
  EXPECT_TRUE(cmp.unusual);
  // vptestnmb k0, ymm19, ymm19
  InstructionInfo test = decode({0x62, 0xb2, 0x66, 0x20, 0x26, 0xc3, 0xc5});
  EXPECT_EQ(test.length, 6u);
  EXPECT_FALSE(test.unusual);
}

TEST(InstructionInfoGapsTest, X86VexLengths) {
  // vmovdqa32 ymmword ptr [rsp + 0x40], ymm0: EVEX, SIB, disp8 (compressed: 2 * 32)
  auto evex = describeX86VexGap(
      std::vector<uint8_t>{0x62, 0xf1, 0x7d, 0x28, 0x7f, 0x44, 0x24, 0x02, 0x90}, 0x1000);
  ASSERT_TRUE(evex.has_value());
  EXPECT_EQ(evex->length, 8u);
  EXPECT_TRUE(evex->unusual);
  // vinsertf128 ymm0, ymm0, xmmword ptr [rax + 0x10], 1: VEX map 0F3A, disp8, imm8
  auto vex =
      describeX86VexGap(std::vector<uint8_t>{0xc4, 0xe3, 0x7d, 0x18, 0x40, 0x10, 0x01}, 0x1000);
  ASSERT_TRUE(vex.has_value());
  EXPECT_EQ(vex->length, 7u);
  // vpshufd ymm0, ymmword ptr [rip + 0x100], 0x1b: VEX map 0F opcode 70 takes an imm8
  auto shuf = describeX86VexGap(
      std::vector<uint8_t>{0xc5, 0xfd, 0x70, 0x05, 0x00, 0x01, 0x00, 0x00, 0x1b}, 0x1000);
  ASSERT_TRUE(shuf.has_value());
  EXPECT_EQ(shuf->length, 9u);
  // Not VEX, or truncated
  EXPECT_FALSE(describeX86VexGap(std::vector<uint8_t>{0x48, 0x8b, 0x00}, 0).has_value());
  EXPECT_FALSE(
      describeX86VexGap(std::vector<uint8_t>{0xc4, 0xe3, 0x7d, 0x18, 0x40}, 0).has_value());
}

class InstructionInfoAArch64Test : public ::testing::Test {
protected:
  static constexpr uint64_t kPc = 0x400000;
  InstructionDecoder decoder{Isa::AArch64};

  std::optional<std::vector<MemorySlot>>
  slots(uint32_t word, std::initializer_list<std::pair<std::string_view, uint64_t>> values = {},
        uint64_t pc = kPc) {
    return slotsChecked(decoder, words({word}), pc, regs(Isa::AArch64, values));
  }
  InstructionInfo decode(uint32_t word, uint64_t pc = kPc) {
    std::optional<InstructionInfo> info = decoder.decode(words({word}), pc);
    EXPECT_TRUE(info.has_value());
    return info.value_or(InstructionInfo{});
  }
};

TEST_F(InstructionInfoAArch64Test, PreAndPostIndex) {
  // ldr x0, [x1, #8]!: accesses x1 + 8
  expectSlots(slots(0xf8408c20, {{"x1", 0x1000}}), {slot(0x1008, 8, true, false)});
  EXPECT_EQ(decode(0xf8408c20).memory.at(0).writeback, Writeback::PreIndex);
  // ldr x0, [x1], #8: accesses x1, then adds 8
  expectSlots(slots(0xf8408420, {{"x1", 0x1000}}), {slot(0x1000, 8, true, false)});
  InstructionInfo post = decode(0xf8408420);
  EXPECT_EQ(post.memory.at(0).writeback, Writeback::PostIndex);
  EXPECT_EQ(post.memory.at(0).displacement, 8);
  // str w2, [sp, #-16]!
  expectSlots(slots(0xb81f0fe2, {{"sp", 0x7fff0000}}), {slot(0x7ffefff0, 4, false, true)});
  // str w2, [sp], #16
  expectSlots(slots(0xb80107e2, {{"sp", 0x7fff0000}}), {slot(0x7fff0000, 4, false, true)});
  // strb w0, [x1], #1
  expectSlots(slots(0x38001420, {{"x1", 0x2000}}), {slot(0x2000, 1, false, true)});
}

TEST_F(InstructionInfoAArch64Test, OffsetsAndSizes) {
  expectSlots(slots(0xf9400820, {{"x1", 0x1000}}), {slot(0x1010, 8, true, false)});  // ldr [x1,#16]
  expectSlots(slots(0xf85fd020, {{"x1", 0x1000}}), {slot(0xffd, 8, true, false)});   // ldur #-3
  expectSlots(slots(0x39800420, {{"x1", 0x1000}}), {slot(0x1001, 1, true, false)});  // ldrsb x0
  expectSlots(slots(0x79c00420, {{"x1", 0x1000}}), {slot(0x1002, 2, true, false)});  // ldrsh w0
  expectSlots(slots(0xb9800420, {{"x1", 0x1000}}), {slot(0x1004, 4, true, false)});  // ldrsw x0
  expectSlots(slots(0xfd400400, {{"x0", 0x3000}}), {slot(0x3008, 8, true, false)});  // ldr d0
  expectSlots(slots(0xbd000001, {{"x0", 0x3000}}), {slot(0x3000, 4, false, true)});  // str s1
  expectSlots(slots(0x3d400002, {{"x0", 0x3000}}), {slot(0x3000, 1, true, false)});  // ldr b2
  expectSlots(slots(0x7d400002, {{"x0", 0x3000}}), {slot(0x3000, 2, true, false)});  // ldr h2
  expectSlots(slots(0xf94003c0, {{"x30", 0x4000}}), {slot(0x4000, 8, true, false)}); // [x30]
  expectSlots(slots(0xf94007a0, {{"x29", 0x4000}}), {slot(0x4008, 8, true, false)}); // [x29,#8]
}

TEST_F(InstructionInfoAArch64Test, RegisterOffsets) {
  // ldr x0, [x1, x2, lsl #3]: 0x1000 + 5*8
  expectSlots(slots(0xf8627820, {{"x1", 0x1000}, {"x2", 5}}), {slot(0x1028, 8, true, false)});
  // ldr w0, [x1, w2, sxtw #2]: w2 = -2 -> 0x1000 - 8; the upper half of x2 is ignored
  expectSlots(slots(0xb862d820, {{"x1", 0x1000}, {"x2", 0x12345678fffffffe}}),
              {slot(0xff8, 4, true, false)});
  // ldrb w0, [x1, w2, uxtw]: w2 zero-extended
  expectSlots(slots(0x38624820, {{"x1", 0x1000}, {"x2", 0xffffffff00000010}}),
              {slot(0x1010, 1, true, false)});
  // ldrh w0, [x1, x2]
  expectSlots(slots(0x78626820, {{"x1", 0x1000}, {"x2", 0x20}}), {slot(0x1020, 2, true, false)});
}

TEST_F(InstructionInfoAArch64Test, PairsAreOneSlot) {
  // ldp x29, x30, [sp], #16: 16 bytes at sp
  expectSlots(slots(0xa8c17bfd, {{"sp", 0x7fff0000}}), {slot(0x7fff0000, 16, true, false)});
  // stp x29, x30, [sp, #-32]!
  expectSlots(slots(0xa9be7bfd, {{"sp", 0x7fff0000}}), {slot(0x7ffeffe0, 16, false, true)});
  // stp x0, x1, [x2, #16]
  expectSlots(slots(0xa9010440, {{"x2", 0x5000}}), {slot(0x5010, 16, false, true)});
  // ldp q0, q1, [x0]: 32 bytes
  expectSlots(slots(0xad400400, {{"x0", 0x5000}}), {slot(0x5000, 32, true, false)});
  // ldpsw x0, x1, [x2]: two words
  expectSlots(slots(0x69400440, {{"x2", 0x5000}}), {slot(0x5000, 8, true, false)});
  // ldnp x0, x1, [x2]
  expectSlots(slots(0xa8400440, {{"x2", 0x5000}}), {slot(0x5000, 16, true, false)});
}

TEST_F(InstructionInfoAArch64Test, LiteralLoadsArePcRelative) {
  // At offset 0x28 of the listing, `ldr x0, lit` with lit at offset 0xe8: pc + 0xc0
  const uint64_t pc = kPc + 0x28;
  expectSlots(slots(0x58000600, {}, pc), {slot(kPc + 0xe8, 8, true, false)});
  // ldr w3, ldrsw x3, ldr q0 from 0x2c, 0x30, 0x34 to the same literal
  expectSlots(slots(0x180005e3, {}, kPc + 0x2c), {slot(kPc + 0xe8, 4, true, false)});
  expectSlots(slots(0x980005c3, {}, kPc + 0x30), {slot(kPc + 0xe8, 4, true, false)});
  expectSlots(slots(0x9c0005a0, {}, kPc + 0x34), {slot(kPc + 0xe8, 16, true, false)});
  EXPECT_TRUE(decode(0x58000600, pc).memory.at(0).pcRelative);
  // prfm (literal and register): hints, not accesses
  expectSlots(slots(0xd8000580, {}, kPc + 0x38), {});
  expectSlots(slots(0xf9800000), {});
}

TEST_F(InstructionInfoAArch64Test, ExclusivesAndAcquireRelease) {
  expectSlots(slots(0xc85f7c20, {{"x1", 0x6000}}), {slot(0x6000, 8, true, false)});  // ldxr x0
  expectSlots(slots(0xc8017c40, {{"x2", 0x6000}}), {slot(0x6000, 8, false, true)});  // stxr w1,x0
  expectSlots(slots(0xc87f8440, {{"x2", 0x6000}}), {slot(0x6000, 16, true, false)}); // ldaxp
  expectSlots(slots(0xc8238440, {{"x2", 0x6000}}), {slot(0x6000, 16, false, true)}); // stlxp
  expectSlots(slots(0xc8dffc20, {{"x1", 0x6000}}), {slot(0x6000, 8, true, false)});  // ldar x0
  expectSlots(slots(0x889ffc20, {{"x1", 0x6000}}), {slot(0x6000, 4, false, true)});  // stlr w0
}

TEST_F(InstructionInfoAArch64Test, UnusualAccesses) {
  EXPECT_TRUE(decode(0x4c407000).unusual); // ld1 {v0.16b}, [x0]
  EXPECT_TRUE(decode(0x4cdf7000).unusual); // ld1 {v0.16b}, [x0], #16
  EXPECT_TRUE(decode(0x4c008800).unusual); // st2 {v0.4s, v1.4s}, [x0]
  EXPECT_TRUE(decode(0xd50b7420).unusual); // dc zva, x0
  EXPECT_FALSE(slots(0x4c407000).has_value());
}

TEST_F(InstructionInfoAArch64Test, BranchKindsAndTargets) {
  // Listing offsets 0xb4..0xd8, all direct ones aimed at offset 0xe8.
  struct Case {
    uint32_t word;
    uint64_t offset;
    BranchKind kind;
    bool direct;
  };
  const Case cases[] = {
      {0x1400000d, 0xb4, BranchKind::Jump, true},            // b
      {0x54000181, 0xb8, BranchKind::ConditionalJump, true}, // b.ne
      {0xb4000160, 0xbc, BranchKind::ConditionalJump, true}, // cbz x0
      {0x37180140, 0xc0, BranchKind::ConditionalJump, true}, // tbnz w0, #3
      {0xd61f0200, 0xc4, BranchKind::IndirectJump, false},   // br x16
      {0x94000008, 0xc8, BranchKind::Call, true},            // bl
      {0xd63f0100, 0xcc, BranchKind::IndirectCall, false},   // blr x8
      {0xd65f03c0, 0xd0, BranchKind::Return, false},         // ret
      {0xd65f0020, 0xd4, BranchKind::Return, false},         // ret x1
      {0xd4000001, 0xd8, BranchKind::Syscall, false},        // svc #0
  };
  for (const Case &c : cases) {
    InstructionInfo info = decode(c.word, kPc + c.offset);
    EXPECT_EQ(info.kind, c.kind) << std::hex << c.word;
    EXPECT_EQ(info.length, 4u);
    if (c.direct)
      EXPECT_EQ(info.target, kPc + 0xe8) << std::hex << c.word;
    else
      EXPECT_FALSE(info.target.has_value()) << std::hex << c.word;
    EXPECT_TRUE(info.memory.empty());
  }
  EXPECT_EQ(decode(0x8b030042).kind, BranchKind::None); // add x2, x2, x3
}

TEST_F(InstructionInfoAArch64Test, AtomicsThatCapstone4Lacks) {
  expectSlots(slots(0xb8200041, {{"x2", 0x9000}}), {slot(0x9000, 4, true, true)});  // ldadd w0,w1
  expectSlots(slots(0xf8e00041, {{"x2", 0x9000}}), {slot(0x9000, 8, true, true)});  // ldaddal x
  expectSlots(slots(0x38208041, {{"x2", 0x9000}}), {slot(0x9000, 1, true, true)});  // swpb
  expectSlots(slots(0xc8a07c41, {{"x2", 0x9000}}), {slot(0x9000, 8, true, true)});  // cas x0, x1
  expectSlots(slots(0x48207c82, {{"x4", 0x9000}}), {slot(0x9000, 16, true, true)}); // casp x
  expectSlots(slots(0xb820003f, {{"x1", 0x9100}}), {slot(0x9100, 4, true, true)});  // stadd w0
  expectSlots(slots(0xf82003e1, {{"sp", 0x7fff0000}}),
              {slot(0x7fff0000, 8, true, true)});                                   // ldadd [sp]
  expectSlots(slots(0xf8bfc020, {{"x1", 0x9200}}), {slot(0x9200, 8, true, false)}); // ldapr x0
  expectSlots(slots(0x38bfc3e0, {{"sp", 0x7fff0000}}),
              {slot(0x7fff0000, 1, true, false)});                    // ldaprb w0, [sp]
  EXPECT_TRUE(decode(0xf8201420).unusual);                            // ldraa x0, [x1, #8]
  EXPECT_FALSE(decoder.decode(words({0x1e7e0000}), kPc).has_value()); // fjcvtzs: unknown
}

TEST_F(InstructionInfoAArch64Test, PointerAuthenticatingBranches) {
  const std::pair<uint32_t, BranchKind> cases[] = {
      {0xd65f0bff, BranchKind::Return},       {0xd65f0fff, BranchKind::Return},
      {0xd61f083f, BranchKind::IndirectJump}, {0xd61f0c5f, BranchKind::IndirectJump},
      {0xd71f08a6, BranchKind::IndirectJump}, {0xd71f0cff, BranchKind::IndirectJump},
      {0xd63f087f, BranchKind::IndirectCall}, {0xd63f0c9f, BranchKind::IndirectCall},
      {0xd73f0909, BranchKind::IndirectCall}, {0xd73f0d4b, BranchKind::IndirectCall},
  };
  for (const auto &[word, kind] : cases)
    EXPECT_EQ(decode(word).kind, kind) << std::hex << word;
  EXPECT_EQ(decode(0xd503233f).kind, BranchKind::None); // paciasp (a hint)
}

TEST(InstructionInfoAddressTest, FormulaPieces) {
  InstructionInfo insn;
  insn.isa = Isa::X86_64;
  insn.address = 0x1000;
  insn.length = 6;
  MemoryOperand op;
  op.pcRelative = true;
  op.displacement = -0x10;
  EXPECT_EQ(effectiveAddress(op, insn, {}), 0x1000u + 6 - 0x10);
  insn.isa = Isa::AArch64;
  EXPECT_EQ(effectiveAddress(op, insn, {}), 0x1000u - 0x10);
  // Registers beyond the snapshot read as zero.
  MemoryOperand beyond;
  beyond.base = 40;
  beyond.displacement = 0x20;
  EXPECT_EQ(effectiveAddress(beyond, insn, std::vector<uint64_t>{1, 2}), 0x20u);
}

} // namespace
} // namespace strobe
