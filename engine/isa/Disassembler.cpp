#include "isa/Disassembler.h"

#include <capstone/capstone.h>
#include <fmt/format.h>

namespace strobe {

namespace {

std::optional<uint64_t> lastImmediate(Isa isa, const cs_detail &detail) {
  std::optional<uint64_t> imm;
  if (isa == Isa::X86_64) {
    for (uint8_t i = 0; i < detail.x86.op_count; ++i)
      if (detail.x86.operands[i].type == X86_OP_IMM)
        imm = static_cast<uint64_t>(detail.x86.operands[i].imm);
  } else {
    for (uint8_t i = 0; i < detail.arm64.op_count; ++i)
      if (detail.arm64.operands[i].type == ARM64_OP_IMM)
        imm = static_cast<uint64_t>(detail.arm64.operands[i].imm);
  }
  return imm;
}

bool isBranch(const cs_detail &detail) {
  for (uint8_t i = 0; i < detail.groups_count; ++i)
    if (detail.groups[i] == CS_GRP_JUMP || detail.groups[i] == CS_GRP_CALL)
      return true;
  return false;
}

} // namespace

Disassembler::Disassembler(Isa isa) : isa_(isa), capstone_(isa) {}

std::optional<Instruction> Disassembler::decode(std::span<const uint8_t> bytes, uint64_t address) {
  const cs_insn *insn = capstone_.decode(bytes, address);
  if (!insn)
    return std::nullopt;
  Instruction out;
  out.address = insn->address;
  out.length = insn->size;
  out.text = insn->op_str[0] ? fmt::format("{} {}", insn->mnemonic, insn->op_str)
                             : std::string(insn->mnemonic);
  if (insn->detail && isBranch(*insn->detail))
    out.branchTarget = lastImmediate(isa_, *insn->detail);
  return out;
}

} // namespace strobe
