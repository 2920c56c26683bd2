// Basic blocks, control-flow edges and natural loops of one function, from its bytes: the
// "function : block : offset" coordinates and the loop heads of the loop-trace feature (spec 000,
// embodiment 2; `strobe loop`).
//
// Choices:
// - Instructions come from a linear sweep of [start, start + size). On x86-64 the sweep stops at
//   the first byte sequence Capstone cannot decode (`undecodedAt`); on AArch64, whose instructions
//   are all 4 bytes, an unknown word (e.g. an ARMv8.1 atomic Capstone 4 lacks) is kept as an opaque
//   instruction that does not branch, and counted in `opaqueInstructions`.
// - Leaders: the entry, every direct jump target that is an instruction start inside the function,
//   and the instruction after every jump, conditional jump, indirect jump or return. Calls and
//   system calls do not end a block: execution comes back to the next instruction, and a loop body
//   that calls a function stays one block per straight-line stretch.
// - Edges: fall-through and taken edges of direct branches. An indirect jump's targets are not read
//   (jump tables live in data), so it is given an assumed edge to every block that no other edge
//   reaches: the cases of a switch, which keeps a loop around a switch a loop.
// - Back edges are the edges whose target dominates their source; the natural loop of a head is
//   the union of the natural loops of its back edges. Retreating edges into a head that does not
//   dominate them (irreducible flow) make no loop.
// - Blocks, ordinals and loops are numbered from 0, in address order.
#pragma once

#include "isa/InstructionInfo.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace strobe {

struct CfgInstruction {
  uint64_t address = 0;
  unsigned length = 0;
  BranchKind kind = BranchKind::None;
  std::optional<uint64_t> target;
  unsigned block = 0;
};

enum class EdgeKind : uint8_t {
  FallThrough,
  Taken,   // a direct jump or conditional jump that was taken
  Assumed, // from an indirect jump to a block nothing else reaches
};

struct CfgEdge {
  unsigned from = 0; // block ids
  unsigned to = 0;
  EdgeKind kind = EdgeKind::FallThrough;
  bool back = false; // `to` dominates `from`

  friend bool operator==(const CfgEdge &, const CfgEdge &) = default;
};

struct BasicBlock {
  uint64_t start = 0;
  uint64_t end = 0; // one past the last instruction's last byte
  unsigned firstInstruction = 0;
  unsigned instructionCount = 0;
  std::vector<unsigned> successors; // block ids, in edge order, without repeats
  std::vector<unsigned> predecessors;
};

struct Loop {
  uint64_t head = 0; // address of the head block
  unsigned headBlock = 0;
  std::vector<unsigned> blocks;    // ascending, the head included
  std::vector<uint64_t> addresses; // every instruction of those blocks, ascending
  std::vector<unsigned> backEdges; // indices in ControlFlowGraph::edges()
  std::optional<unsigned> parent;  // the smallest loop that contains this one
  unsigned depth = 1;              // 1 for an outermost loop
};

struct CodeLocation {
  unsigned block = 0;
  unsigned indexInBlock = 0;  // instructions before it in its block
  uint64_t offsetInBlock = 0; // bytes from the block's start
  unsigned ordinal = 0;       // instructions before it in the function
};

class ControlFlowGraph {
public:
  // `function` names the function for reports (its (module, symbol) identity is the caller's).
  ControlFlowGraph(InstructionDecoder &decoder, std::span<const uint8_t> bytes, uint64_t start,
                   std::string function = {});

  const std::string &function() const { return function_; }
  uint64_t start() const { return start_; }
  uint64_t end() const { return end_; } // start + the bytes given
  std::optional<uint64_t> undecodedAt() const { return undecodedAt_; }
  unsigned opaqueInstructions() const { return opaque_; }

  std::span<const CfgInstruction> instructions() const { return instructions_; }
  std::span<const BasicBlock> blocks() const { return blocks_; }
  std::span<const CfgEdge> edges() const { return edges_; }
  std::span<const Loop> loops() const { return loops_; } // ordered by head address

  // Where `pc` sits; nullopt unless it is the address of one of the instructions.
  std::optional<CodeLocation> locate(uint64_t pc) const;
  // The last instruction starting at or before `address`, the one holding it inside the decoded
  // bytes (a return address minus one names its call); null before the first.
  const CfgInstruction *instructionAtOrBefore(uint64_t address) const;
  // The innermost loop whose blocks hold the instruction at `pc`, or null.
  const Loop *innermostLoop(uint64_t pc) const;
  // The loop whose head block starts at `head`, or null.
  const Loop *loopAt(uint64_t head) const;

private:
  void decodeAll(InstructionDecoder &decoder, std::span<const uint8_t> bytes);
  void formBlocks();
  void connectBlocks();
  void findLoops();
  std::optional<unsigned> instructionAt(uint64_t address) const;

  std::string function_;
  uint64_t start_ = 0;
  uint64_t end_ = 0;
  std::optional<uint64_t> undecodedAt_;
  unsigned opaque_ = 0;
  std::vector<CfgInstruction> instructions_;
  std::vector<BasicBlock> blocks_;
  std::vector<CfgEdge> edges_;
  std::vector<Loop> loops_;
};

} // namespace strobe
