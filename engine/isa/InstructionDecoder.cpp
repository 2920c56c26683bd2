#include "codec/ShortBytes.h"
#include "isa/CapstoneDescribe.h"
#include "isa/CapstoneGaps.h"
#include "isa/InstructionInfo.h"

#include <algorithm>
#include <bit>
#include <fmt/format.h>

namespace strobe {

AccessFormula formulaOf(const MemoryOperand &op, const InstructionInfo &insn) {
  // Register tables have a few dozen entries, far below kNoRegister.
  auto reg = [](std::optional<unsigned> r) {
    return r ? static_cast<uint8_t>(*r) : AccessFormula::kNoRegister;
  };
  AccessFormula f;
  f.index = reg(op.index);
  f.indexExtend = op.indexExtend;
  f.scale = op.scale;
  f.segment = reg(op.segmentBase);
  f.address32 = op.address32;
  f.size = op.size;
  f.read = op.read;
  f.write = op.write;
  if (op.pcRelative)
    f.displacement = insn.address + (insn.isa == Isa::X86_64 ? insn.length : 0);
  else
    f.base = reg(op.base);
  // A post-index access uses its base alone; the displacement is only written back.
  if (op.writeback != Writeback::PostIndex)
    f.displacement += static_cast<uint64_t>(op.displacement);
  return f;
}

InstructionDecoder::InstructionDecoder(Isa isa, RepeatedStrings repeated)
    : isa_(isa), repeated_(repeated), cache_(kCacheEntries), capstone_(isa) {}

InstructionDecoder::~InstructionDecoder() = default;

std::optional<InstructionInfo> InstructionDecoder::decodeUncached(std::span<const uint8_t> bytes,
                                                                  uint64_t pc) {
  const cs_insn *insn = capstone_.decode(bytes, pc);
  if (!insn)
    return isa_ == Isa::X86_64 ? describeX86VexGap(bytes, pc) : describeAArch64Gap(bytes, pc);
  InstructionInfo info;
  info.isa = isa_;
  info.address = pc;
  info.length = insn->size;
  if (isa_ == Isa::X86_64)
    describeX86(*insn, info);
  else
    describeAArch64(*insn, info);
  return info;
}

const InstructionInfo *InstructionDecoder::lookup(std::span<const uint8_t> bytes, uint64_t pc) {
  // A decoded instruction depends only on its own bytes and address: a hit needs both to match.
  // A mask, not % cache_.size(): a division on the codec's path at every memory access.
  static_assert(std::has_single_bit(kCacheEntries));
  CacheEntry &entry = cache_[(pc ^ (pc >> 12)) & (kCacheEntries - 1)];
  if (entry.info && entry.info->address == pc && bytes.size() >= entry.info->length &&
      sameShort(bytes.data(), entry.bytes.data(), entry.info->length))
    return &*entry.info;
  std::optional<InstructionInfo> info = decodeUncached(bytes, pc);
  if (!info)
    return nullptr;
  entry.info = std::move(info);
  std::copy_n(bytes.begin(), entry.info->length, entry.bytes.begin());
  return &*entry.info;
}

std::optional<InstructionInfo> InstructionDecoder::decode(std::span<const uint8_t> bytes,
                                                          uint64_t pc) {
  const InstructionInfo *info = lookup(bytes, pc);
  return info ? std::optional<InstructionInfo>(*info) : std::nullopt;
}

bool InstructionDecoder::predict(std::span<const uint8_t> bytes, uint64_t pc,
                                 std::span<const uint64_t> regs, MemorySlots &out) {
  out.clear();
  const InstructionInfo *info = lookup(bytes, pc);
  if (!info)
    return false;
  if (info->repeated && repeated_ == RepeatedStrings::OneIterationPerStep) {
    const unsigned counter = *registerTable(Isa::X86_64).repeatCount;
    uint64_t count = regs.size() > counter ? regs[counter] : 0;
    if (!info->memory.empty() && info->memory.front().address32)
      count = static_cast<uint32_t>(count);
    if (count == 0)
      return true;
  } else if (info->unusual) {
    return false;
  }
  for (const MemoryOperand &op : info->memory)
    if (!out.add(formulaOf(op, *info).slot(regs)))
      return false;
  return true;
}

bool InstructionDecoder::formulas(std::span<const uint8_t> bytes, uint64_t pc,
                                  AccessFormulas &out) {
  out.clear();
  const InstructionInfo *info = lookup(bytes, pc);
  if (!info || info->unusual)
    return false;
  for (const MemoryOperand &op : info->memory)
    if (!out.add(formulaOf(op, *info)))
      return false;
  return true;
}

} // namespace strobe
