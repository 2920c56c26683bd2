#include "isa/ControlFlow.h"

#include <algorithm>
#include <utility>

namespace strobe {
namespace {

bool endsBlock(BranchKind kind) {
  switch (kind) {
  case BranchKind::Jump:
  case BranchKind::ConditionalJump:
  case BranchKind::IndirectJump:
  case BranchKind::Return:
    return true;
  default:
    return false;
  }
}

void addUnique(std::vector<unsigned> &list, unsigned value) {
  if (std::find(list.begin(), list.end(), value) == list.end())
    list.push_back(value);
}

// Immediate dominators (Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm") of the
// blocks reachable from block 0; unreachable blocks get none.
std::vector<std::optional<unsigned>> immediateDominators(std::span<const BasicBlock> blocks) {
  std::vector<unsigned> postorder;
  std::vector<bool> seen(blocks.size(), false);
  // Iterative DFS: a deep chain of blocks must not exhaust the stack.
  std::vector<std::pair<unsigned, size_t>> stack{{0, 0}};
  seen[0] = true;
  while (!stack.empty()) {
    auto &[block, next] = stack.back();
    if (next < blocks[block].successors.size()) {
      unsigned succ = blocks[block].successors[next++];
      if (!seen[succ]) {
        seen[succ] = true;
        stack.emplace_back(succ, 0);
      }
      continue;
    }
    postorder.push_back(block);
    stack.pop_back();
  }
  std::vector<unsigned> order(blocks.size(), 0); // postorder number
  for (unsigned i = 0; i < postorder.size(); ++i)
    order[postorder[i]] = i;

  std::vector<std::optional<unsigned>> idom(blocks.size());
  idom[0] = 0;
  auto intersect = [&](unsigned a, unsigned b) {
    while (a != b) {
      while (order[a] < order[b])
        a = *idom[a];
      while (order[b] < order[a])
        b = *idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = postorder.rbegin(); it != postorder.rend(); ++it) {
      unsigned block = *it;
      if (block == 0)
        continue;
      std::optional<unsigned> dom;
      for (unsigned pred : blocks[block].predecessors)
        if (idom[pred])
          dom = dom ? intersect(pred, *dom) : pred;
      if (dom && idom[block] != dom) {
        idom[block] = dom;
        changed = true;
      }
    }
  }
  return idom;
}

bool dominates(const std::vector<std::optional<unsigned>> &idom, unsigned a, unsigned b) {
  if (!idom[b])
    return false;
  for (unsigned at = b;; at = *idom[at]) {
    if (at == a)
      return true;
    if (at == 0)
      return false;
  }
}

} // namespace

ControlFlowGraph::ControlFlowGraph(InstructionDecoder &decoder, std::span<const uint8_t> bytes,
                                   uint64_t start, std::string function)
    : function_(std::move(function)), start_(start), end_(start + bytes.size()) {
  decodeAll(decoder, bytes);
  if (instructions_.empty())
    return;
  formBlocks();
  connectBlocks();
  findLoops();
}

void ControlFlowGraph::decodeAll(InstructionDecoder &decoder, std::span<const uint8_t> bytes) {
  constexpr unsigned kAArch64Width = 4;
  size_t offset = 0;
  while (offset < bytes.size()) {
    uint64_t address = start_ + offset;
    std::optional<InstructionInfo> info = decoder.decode(bytes.subspan(offset), address);
    if (info) {
      instructions_.push_back({address, info->length, info->kind, info->target, 0});
    } else if (decoder.isa() == Isa::AArch64 && bytes.size() - offset >= kAArch64Width) {
      instructions_.push_back({address, kAArch64Width, BranchKind::None, std::nullopt, 0});
      ++opaque_;
    } else {
      undecodedAt_ = address;
      return;
    }
    offset += instructions_.back().length;
  }
}

std::optional<unsigned> ControlFlowGraph::instructionAt(uint64_t address) const {
  auto it = std::lower_bound(
      instructions_.begin(), instructions_.end(), address,
      [](const CfgInstruction &insn, uint64_t value) { return insn.address < value; });
  if (it == instructions_.end() || it->address != address)
    return std::nullopt;
  return static_cast<unsigned>(it - instructions_.begin());
}

const CfgInstruction *ControlFlowGraph::instructionAtOrBefore(uint64_t address) const {
  auto after = std::upper_bound(
      instructions_.begin(), instructions_.end(), address,
      [](uint64_t value, const CfgInstruction &insn) { return value < insn.address; });
  if (after == instructions_.begin())
    return nullptr;
  return &*std::prev(after);
}

void ControlFlowGraph::formBlocks() {
  std::vector<bool> leader(instructions_.size(), false);
  leader[0] = true;
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const CfgInstruction &insn = instructions_[i];
    if (!endsBlock(insn.kind))
      continue;
    if (i + 1 < instructions_.size())
      leader[i + 1] = true;
    if (insn.target)
      if (std::optional<unsigned> target = instructionAt(*insn.target))
        leader[*target] = true;
  }
  for (unsigned i = 0; i < instructions_.size(); ++i) {
    if (leader[i])
      blocks_.push_back({instructions_[i].address, 0, i, 0, {}, {}});
    BasicBlock &block = blocks_.back();
    ++block.instructionCount;
    block.end = instructions_[i].address + instructions_[i].length;
    instructions_[i].block = static_cast<unsigned>(blocks_.size() - 1);
  }
}

void ControlFlowGraph::connectBlocks() {
  auto addEdge = [this](unsigned from, unsigned to, EdgeKind kind) {
    edges_.push_back({from, to, kind, false});
    addUnique(blocks_[from].successors, to);
    addUnique(blocks_[to].predecessors, from);
  };
  std::vector<unsigned> indirect; // blocks that end in an indirect jump
  for (unsigned b = 0; b < blocks_.size(); ++b) {
    const BasicBlock &block = blocks_[b];
    const CfgInstruction &last = instructions_[block.firstInstruction + block.instructionCount - 1];
    const bool hasNext = b + 1 < blocks_.size();
    switch (last.kind) {
    case BranchKind::ConditionalJump:
    case BranchKind::Jump:
      if (last.target)
        if (std::optional<unsigned> target = instructionAt(*last.target))
          addEdge(b, instructions_[*target].block, EdgeKind::Taken);
      if (last.kind == BranchKind::ConditionalJump && hasNext)
        addEdge(b, b + 1, EdgeKind::FallThrough);
      break;
    case BranchKind::IndirectJump:
      indirect.push_back(b);
      break;
    case BranchKind::Return:
      break;
    default:
      if (hasNext)
        addEdge(b, b + 1, EdgeKind::FallThrough);
      break;
    }
  }
  std::vector<unsigned> orphans;
  for (unsigned b = 1; b < blocks_.size(); ++b)
    if (blocks_[b].predecessors.empty())
      orphans.push_back(b);
  for (unsigned from : indirect)
    for (unsigned to : orphans)
      addEdge(from, to, EdgeKind::Assumed);
}

void ControlFlowGraph::findLoops() {
  const std::vector<std::optional<unsigned>> idom = immediateDominators(blocks_);
  std::vector<std::vector<unsigned>> backEdgesOf(blocks_.size());
  for (unsigned e = 0; e < edges_.size(); ++e) {
    CfgEdge &edge = edges_[e];
    edge.back = dominates(idom, edge.to, edge.from);
    if (edge.back)
      backEdgesOf[edge.to].push_back(e);
  }
  for (unsigned head = 0; head < blocks_.size(); ++head) {
    if (backEdgesOf[head].empty())
      continue;
    // Everything that reaches a latch without passing through the head.
    std::vector<bool> inLoop(blocks_.size(), false);
    inLoop[head] = true;
    std::vector<unsigned> work;
    for (unsigned e : backEdgesOf[head])
      if (!inLoop[edges_[e].from]) {
        inLoop[edges_[e].from] = true;
        work.push_back(edges_[e].from);
      }
    while (!work.empty()) {
      unsigned block = work.back();
      work.pop_back();
      for (unsigned pred : blocks_[block].predecessors)
        if (!inLoop[pred]) {
          inLoop[pred] = true;
          work.push_back(pred);
        }
    }
    Loop loop;
    loop.head = blocks_[head].start;
    loop.headBlock = head;
    loop.backEdges = backEdgesOf[head];
    for (unsigned b = 0; b < blocks_.size(); ++b) {
      if (!inLoop[b])
        continue;
      loop.blocks.push_back(b);
      const BasicBlock &block = blocks_[b];
      for (unsigned i = 0; i < block.instructionCount; ++i)
        loop.addresses.push_back(instructions_[block.firstInstruction + i].address);
    }
    loops_.push_back(std::move(loop));
  }
  // Natural loops with distinct heads are nested or disjoint: the parent is the smallest other
  // loop that holds this loop's head.
  for (Loop &loop : loops_) {
    for (unsigned other = 0; other < loops_.size(); ++other) {
      const Loop &candidate = loops_[other];
      if (&candidate == &loop || candidate.blocks.size() <= loop.blocks.size() ||
          !std::binary_search(candidate.blocks.begin(), candidate.blocks.end(), loop.headBlock))
        continue;
      if (!loop.parent || loops_[*loop.parent].blocks.size() > candidate.blocks.size())
        loop.parent = other;
    }
  }
  for (Loop &loop : loops_)
    for (std::optional<unsigned> up = loop.parent; up; up = loops_[*up].parent)
      ++loop.depth;
}

std::optional<CodeLocation> ControlFlowGraph::locate(uint64_t pc) const {
  std::optional<unsigned> ordinal = instructionAt(pc);
  if (!ordinal)
    return std::nullopt;
  const CfgInstruction &insn = instructions_[*ordinal];
  const BasicBlock &block = blocks_[insn.block];
  return CodeLocation{insn.block, *ordinal - block.firstInstruction, pc - block.start, *ordinal};
}

const Loop *ControlFlowGraph::innermostLoop(uint64_t pc) const {
  std::optional<unsigned> ordinal = instructionAt(pc);
  if (!ordinal)
    return nullptr;
  const unsigned block = instructions_[*ordinal].block;
  const Loop *best = nullptr;
  for (const Loop &loop : loops_)
    if (std::binary_search(loop.blocks.begin(), loop.blocks.end(), block) &&
        (!best || loop.blocks.size() < best->blocks.size()))
      best = &loop;
  return best;
}

const Loop *ControlFlowGraph::loopAt(uint64_t head) const {
  for (const Loop &loop : loops_)
    if (loop.head == head)
      return &loop;
  return nullptr;
}

} // namespace strobe
