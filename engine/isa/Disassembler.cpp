#include "isa/Disassembler.h"

#include <capstone/capstone.h>
#include <fmt/format.h>
#include <stdexcept>
#include <type_traits>

namespace strobe {

// The header keeps Capstone out of its includers by naming the handle's underlying type.
static_assert(std::is_same_v<csh, size_t>);

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

Disassembler::Disassembler(Isa isa) : isa_(isa) {
  cs_arch arch = isa == Isa::X86_64 ? CS_ARCH_X86 : CS_ARCH_ARM64;
  cs_mode mode = isa == Isa::X86_64 ? CS_MODE_64 : CS_MODE_ARM;
  if (cs_err err = cs_open(arch, mode, &handle_); err != CS_ERR_OK)
    throw std::runtime_error(fmt::format("capstone: {}", cs_strerror(err)));
  // Details give the operands, which is how a direct branch's destination is found.
  cs_option(handle_, CS_OPT_DETAIL, CS_OPT_ON);
  insn_ = cs_malloc(handle_);
}

Disassembler::~Disassembler() {
  if (insn_)
    cs_free(insn_, 1);
  cs_close(&handle_);
}

std::optional<Instruction> Disassembler::decode(std::span<const uint8_t> bytes, uint64_t address) {
  const uint8_t *code = bytes.data();
  size_t size = bytes.size();
  uint64_t at = address;
  if (!insn_ || !cs_disasm_iter(handle_, &code, &size, &at, insn_))
    return std::nullopt;
  Instruction out;
  out.address = insn_->address;
  out.length = insn_->size;
  out.text = insn_->op_str[0] ? fmt::format("{} {}", insn_->mnemonic, insn_->op_str)
                              : std::string(insn_->mnemonic);
  if (insn_->detail && isBranch(*insn_->detail))
    out.branchTarget = lastImmediate(isa_, *insn_->detail);
  return out;
}

} // namespace strobe
