// Basic blocks, edges and loops of hand-assembled functions. The listings (GNU as) are in the
// comments; the expected blocks, edges and loops are worked out from them by hand.
#include "isa/ControlFlow.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

namespace strobe {
namespace {

std::vector<uint8_t> words(std::initializer_list<uint32_t> ws) {
  std::vector<uint8_t> out;
  for (uint32_t w : ws)
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  return out;
}

std::vector<uint64_t> offsets(uint64_t base, std::initializer_list<uint64_t> offs) {
  std::vector<uint64_t> out;
  for (uint64_t o : offs)
    out.push_back(base + o);
  return out;
}

struct BlockShape {
  uint64_t start, end; // offsets
  unsigned first, count;
};

void expectBlocks(const ControlFlowGraph &cfg, std::initializer_list<BlockShape> want) {
  ASSERT_EQ(cfg.blocks().size(), want.size());
  unsigned i = 0;
  for (const BlockShape &w : want) {
    const BasicBlock &b = cfg.blocks()[i];
    EXPECT_EQ(b.start, cfg.start() + w.start) << "block " << i;
    EXPECT_EQ(b.end, cfg.start() + w.end) << "block " << i;
    EXPECT_EQ(b.firstInstruction, w.first) << "block " << i;
    EXPECT_EQ(b.instructionCount, w.count) << "block " << i;
    ++i;
  }
}

// x86-64, two nested counting loops with a call in the outer one:
//    0: 55          push rbp
//    1: 31 c0       xor eax, eax
//    3: 31 c9       xor ecx, ecx
//    5: 31 d2       outer: xor edx, edx
//    7: 01 d0       inner: add eax, edx
//    9: ff c2       inc edx
//    b: 83 fa 0a    cmp edx, 10
//    e: 7c f7       jl inner
//   10: e8 09 ..    call ext (0x1e, just past the function)
//   15: ff c1       inc ecx
//   17: 83 f9 05    cmp ecx, 5
//   1a: 7c e9       jl outer
//   1c: 5d          pop rbp
//   1d: c3          ret
const std::vector<uint8_t> kNestedX86 = {
    0x55, 0x31, 0xc0, 0x31, 0xc9, 0x31, 0xd2, 0x01, 0xd0, 0xff, 0xc2, 0x83, 0xfa, 0x0a, 0x7c,
    0xf7, 0xe8, 0x09, 0x00, 0x00, 0x00, 0xff, 0xc1, 0x83, 0xf9, 0x05, 0x7c, 0xe9, 0x5d, 0xc3};

TEST(ControlFlowTest, X86NestedLoops) {
  InstructionDecoder decoder(Isa::X86_64);
  const uint64_t base = 0x401100;
  ControlFlowGraph cfg(decoder, kNestedX86, base, "nested");
  EXPECT_EQ(cfg.function(), "nested");
  EXPECT_EQ(cfg.end(), base + 0x1e);
  EXPECT_FALSE(cfg.undecodedAt().has_value());
  ASSERT_EQ(cfg.instructions().size(), 14u);

  // Leaders: entry 0, jump targets 5 and 7, after-branch 0x10 and 0x1c; the call at 0x10 does
  // not end its block.
  expectBlocks(cfg, {{0x0, 0x5, 0, 3},
                     {0x5, 0x7, 3, 1},
                     {0x7, 0x10, 4, 4},
                     {0x10, 0x1c, 8, 4},
                     {0x1c, 0x1e, 12, 2}});

  const std::vector<CfgEdge> want = {
      {0, 1, EdgeKind::FallThrough, false}, {1, 2, EdgeKind::FallThrough, false},
      {2, 2, EdgeKind::Taken, true},        {2, 3, EdgeKind::FallThrough, false},
      {3, 1, EdgeKind::Taken, true},        {3, 4, EdgeKind::FallThrough, false}};
  EXPECT_EQ(std::vector<CfgEdge>(cfg.edges().begin(), cfg.edges().end()), want);
  EXPECT_EQ(cfg.blocks()[1].predecessors, (std::vector<unsigned>{0, 3}));
  EXPECT_EQ(cfg.blocks()[2].successors, (std::vector<unsigned>{2, 3}));

  ASSERT_EQ(cfg.loops().size(), 2u);
  const Loop &outer = cfg.loops()[0];
  const Loop &inner = cfg.loops()[1];
  EXPECT_EQ(outer.head, base + 0x5);
  EXPECT_EQ(outer.blocks, (std::vector<unsigned>{1, 2, 3}));
  EXPECT_EQ(outer.addresses, offsets(base, {0x5, 0x7, 0x9, 0xb, 0xe, 0x10, 0x15, 0x17, 0x1a}));
  EXPECT_EQ(outer.backEdges, (std::vector<unsigned>{4}));
  EXPECT_FALSE(outer.parent.has_value());
  EXPECT_EQ(outer.depth, 1u);
  EXPECT_EQ(inner.head, base + 0x7);
  EXPECT_EQ(inner.blocks, (std::vector<unsigned>{2}));
  EXPECT_EQ(inner.addresses, offsets(base, {0x7, 0x9, 0xb, 0xe}));
  EXPECT_EQ(inner.parent, 0u);
  EXPECT_EQ(inner.depth, 2u);

  // cmp edx, 10 at 0xb: block 2, third instruction there, 4 bytes in, ordinal 6.
  std::optional<CodeLocation> at = cfg.locate(base + 0xb);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->block, 2u);
  EXPECT_EQ(at->indexInBlock, 2u);
  EXPECT_EQ(at->offsetInBlock, 4u);
  EXPECT_EQ(at->ordinal, 6u);
  std::optional<CodeLocation> ret = cfg.locate(base + 0x1d);
  ASSERT_TRUE(ret.has_value());
  EXPECT_EQ(ret->ordinal, 13u);
  EXPECT_EQ(ret->block, 4u);
  EXPECT_FALSE(cfg.locate(base + 0xc).has_value()); // inside cmp
  EXPECT_FALSE(cfg.locate(base + 0x1e).has_value());

  ASSERT_NE(cfg.innermostLoop(base + 0xb), nullptr);
  EXPECT_EQ(cfg.innermostLoop(base + 0xb)->head, base + 0x7);
  ASSERT_NE(cfg.innermostLoop(base + 0x10), nullptr);
  EXPECT_EQ(cfg.innermostLoop(base + 0x10)->head, base + 0x5);
  EXPECT_EQ(cfg.innermostLoop(base + 0x1), nullptr);
  EXPECT_EQ(cfg.innermostLoop(base + 0x1c), nullptr);
  EXPECT_EQ(cfg.loopAt(base + 0x7), &inner);
  EXPECT_EQ(cfg.loopAt(base + 0x9), nullptr);
}

// A loop that goes through an indirect jump (a switch):
//   0: ff cf   head: dec edi
//   2: 74 04   je out
//   4: ff e0   jmp rax        (a case is at 6)
//   6: eb f8   jmp head
//   8: c3      out: ret
TEST(ControlFlowTest, IndirectJumpReachesOrphanBlocks) {
  InstructionDecoder decoder(Isa::X86_64);
  const std::vector<uint8_t> bytes = {0xff, 0xcf, 0x74, 0x04, 0xff, 0xe0, 0xeb, 0xf8, 0xc3};
  ControlFlowGraph cfg(decoder, bytes, 0x1000);
  expectBlocks(cfg, {{0, 4, 0, 2}, {4, 6, 2, 1}, {6, 8, 3, 1}, {8, 9, 4, 1}});
  const std::vector<CfgEdge> want = {{0, 3, EdgeKind::Taken, false},
                                     {0, 1, EdgeKind::FallThrough, false},
                                     {2, 0, EdgeKind::Taken, true},
                                     {1, 2, EdgeKind::Assumed, false}};
  EXPECT_EQ(std::vector<CfgEdge>(cfg.edges().begin(), cfg.edges().end()), want);
  ASSERT_EQ(cfg.loops().size(), 1u);
  EXPECT_EQ(cfg.loops()[0].head, 0x1000u);
  EXPECT_EQ(cfg.loops()[0].blocks, (std::vector<unsigned>{0, 1, 2}));
}

// Irreducible flow: two blocks entered from outside each other, jumping to each other.
//   0: 74 02   je b
//   2: eb 00   a: jmp b      (falls to b's address anyway, but as a taken jump)
//   4: 75 fc   b: jne a
//   6: c3      ret
TEST(ControlFlowTest, IrreducibleCycleIsNoLoop) {
  InstructionDecoder decoder(Isa::X86_64);
  const std::vector<uint8_t> bytes = {0x74, 0x02, 0xeb, 0x00, 0x75, 0xfc, 0xc3};
  ControlFlowGraph cfg(decoder, bytes, 0x2000);
  expectBlocks(cfg, {{0, 2, 0, 1}, {2, 4, 1, 1}, {4, 6, 2, 1}, {6, 7, 3, 1}});
  EXPECT_TRUE(cfg.loops().empty());
  for (const CfgEdge &e : cfg.edges())
    EXPECT_FALSE(e.back);
}

TEST(ControlFlowTest, X86StopsAtUndecodableBytes) {
  InstructionDecoder decoder(Isa::X86_64);
  // nop; nop; 06 (invalid in 64-bit mode); ret
  const std::vector<uint8_t> bytes = {0x90, 0x90, 0x06, 0xc3};
  ControlFlowGraph cfg(decoder, bytes, 0x3000);
  EXPECT_EQ(cfg.undecodedAt(), 0x3002u);
  EXPECT_EQ(cfg.instructions().size(), 2u);
  expectBlocks(cfg, {{0, 2, 0, 2}});
  EXPECT_FALSE(cfg.locate(0x3003).has_value());
}

TEST(ControlFlowTest, EmptyFunction) {
  InstructionDecoder decoder(Isa::X86_64);
  ControlFlowGraph cfg(decoder, {}, 0x3000);
  EXPECT_TRUE(cfg.blocks().empty());
  EXPECT_TRUE(cfg.loops().empty());
  EXPECT_EQ(cfg.innermostLoop(0x3000), nullptr);
}

// AArch64, nested loops, a call, an ARMv8.3 instruction nobody here decodes, and a signed return:
//    0: d2800002   mov x2, #0
//    4: d2800003   outer: mov x3, #0
//    8: 8b030042   inner: add x2, x2, x3
//    c: 91000463   add x3, x3, #1
//   10: f100287f   cmp x3, #10
//   14: 54ffffab   b.lt inner
//   18: 94000005   bl ext (0x2c)
//   1c: f1000400   subs x0, x0, #1
//   20: 54ffff21   b.ne outer
//   24: 1e7e0000   fjcvtzs w0, d0
//   28: d65f0bff   retaa
TEST(ControlFlowTest, AArch64NestedLoops) {
  InstructionDecoder decoder(Isa::AArch64);
  const uint64_t base = 0x410000;
  const std::vector<uint8_t> bytes =
      words({0xd2800002, 0xd2800003, 0x8b030042, 0x91000463, 0xf100287f, 0x54ffffab, 0x94000005,
             0xf1000400, 0x54ffff21, 0x1e7e0000, 0xd65f0bff});
  ControlFlowGraph cfg(decoder, bytes, base);
  EXPECT_FALSE(cfg.undecodedAt().has_value());
  EXPECT_EQ(cfg.opaqueInstructions(), 1u);
  ASSERT_EQ(cfg.instructions().size(), 11u);
  expectBlocks(cfg, {{0x0, 0x4, 0, 1},
                     {0x4, 0x8, 1, 1},
                     {0x8, 0x18, 2, 4},
                     {0x18, 0x24, 6, 3},
                     {0x24, 0x2c, 9, 2}});
  ASSERT_EQ(cfg.loops().size(), 2u);
  EXPECT_EQ(cfg.loops()[0].head, base + 0x4);
  EXPECT_EQ(cfg.loops()[0].blocks, (std::vector<unsigned>{1, 2, 3}));
  EXPECT_EQ(cfg.loops()[1].head, base + 0x8);
  EXPECT_EQ(cfg.loops()[1].blocks, (std::vector<unsigned>{2}));
  EXPECT_EQ(cfg.loops()[1].parent, 0u);
  EXPECT_EQ(cfg.innermostLoop(base + 0x10)->head, base + 0x8);
  EXPECT_EQ(cfg.innermostLoop(base + 0x1c)->head, base + 0x4);
  EXPECT_EQ(cfg.innermostLoop(base + 0x24), nullptr);
  std::optional<CodeLocation> at = cfg.locate(base + 0x20);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->block, 3u);
  EXPECT_EQ(at->indexInBlock, 2u);
  EXPECT_EQ(at->offsetInBlock, 8u);
  EXPECT_EQ(at->ordinal, 8u);
  EXPECT_EQ(cfg.locate(base + 0x24)->ordinal, 9u); // the opaque word keeps the ordinals right
  EXPECT_EQ(cfg.instructions()[10].kind, BranchKind::Return);
  // Only the fall-through into the last block leaves block 3 besides its back edge; nothing
  // leaves block 4, which ends in the return.
  EXPECT_EQ(cfg.blocks()[3].successors, (std::vector<unsigned>{1, 4}));
  EXPECT_TRUE(cfg.blocks()[4].successors.empty());
}

} // namespace
} // namespace strobe
