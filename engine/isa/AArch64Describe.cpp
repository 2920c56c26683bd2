// AArch64: branch kinds from the instruction id; memory operands from Capstone's memory operand,
// with the access size and direction taken from the mnemonic and the data register, because
// Capstone 4 reports neither reliably (a store's operand reads as "read|write", stxr's as "read").
#include "isa/CapstoneDescribe.h"

#include <string_view>

namespace strobe {
namespace {

struct AddressRegister {
  unsigned index;
  bool is32; // w0..w30 as an extended index
};

std::optional<AddressRegister> addressRegister(unsigned reg) {
  const RegisterTable &table = registerTable(Isa::AArch64);
  // The table holds x0..x30 at 0..30 (their architectural numbers); Capstone 4 numbers x29 and
  // x30 apart from x0..x28.
  if (reg >= ARM64_REG_X0 && reg <= ARM64_REG_X28)
    return AddressRegister{reg - ARM64_REG_X0, false};
  if (reg == ARM64_REG_X29)
    return AddressRegister{29, false};
  if (reg == ARM64_REG_X30)
    return AddressRegister{30, false};
  if (reg == ARM64_REG_SP)
    return AddressRegister{table.sp, false};
  if (reg >= ARM64_REG_W0 && reg <= ARM64_REG_W30)
    return AddressRegister{reg - ARM64_REG_W0, true};
  return std::nullopt;
}

// Bytes a data register holds, or 0 when the operand is not a scalar register.
uint32_t registerWidth(unsigned reg) {
  auto within = [reg](unsigned first, unsigned count) {
    return reg >= first && reg < first + count;
  };
  if (within(ARM64_REG_X0, 29) || reg == ARM64_REG_X29 || reg == ARM64_REG_X30 ||
      reg == ARM64_REG_XZR || reg == ARM64_REG_SP)
    return 8;
  if (within(ARM64_REG_W0, 31) || reg == ARM64_REG_WZR || reg == ARM64_REG_WSP)
    return 4;
  if (within(ARM64_REG_B0, 32))
    return 1;
  if (within(ARM64_REG_H0, 32))
    return 2;
  if (within(ARM64_REG_S0, 32))
    return 4;
  if (within(ARM64_REG_D0, 32))
    return 8;
  if (within(ARM64_REG_Q0, 32))
    return 16;
  return 0;
}

void classifyBranch(const cs_insn &insn, InstructionInfo &info) {
  const cs_arm64 &a = insn.detail->arm64;
  std::optional<uint64_t> lastImm;
  for (uint8_t i = 0; i < a.op_count; ++i)
    if (a.operands[i].type == ARM64_OP_IMM)
      lastImm = static_cast<uint64_t>(a.operands[i].imm);
  switch (insn.id) {
  case ARM64_INS_B:
    info.kind = a.cc == ARM64_CC_INVALID || a.cc == ARM64_CC_AL ? BranchKind::Jump
                                                                : BranchKind::ConditionalJump;
    info.target = lastImm;
    break;
  case ARM64_INS_CBZ:
  case ARM64_INS_CBNZ:
  case ARM64_INS_TBZ:
  case ARM64_INS_TBNZ:
    info.kind = BranchKind::ConditionalJump;
    info.target = lastImm;
    break;
  case ARM64_INS_BL:
    info.kind = BranchKind::Call;
    info.target = lastImm;
    break;
  case ARM64_INS_BR:
    info.kind = BranchKind::IndirectJump;
    break;
  case ARM64_INS_BLR:
    info.kind = BranchKind::IndirectCall;
    break;
  case ARM64_INS_RET:
    info.kind = BranchKind::Return;
    break;
  case ARM64_INS_SVC:
    info.kind = BranchKind::Syscall;
    break;
  default:
    break;
  }
}

bool isPair(unsigned id) {
  switch (id) {
  case ARM64_INS_LDP:
  case ARM64_INS_STP:
  case ARM64_INS_LDNP:
  case ARM64_INS_STNP:
  case ARM64_INS_LDPSW:
  case ARM64_INS_LDXP:
  case ARM64_INS_STXP:
  case ARM64_INS_LDAXP:
  case ARM64_INS_STLXP:
    return true;
  default:
    return false;
  }
}

// ld1..ld4, ld1r..ld4r, st1..st4: element-wise SIMD structure accesses.
bool isStructureAccess(std::string_view mnemonic) {
  return mnemonic.size() >= 3 && (mnemonic.starts_with("ld") || mnemonic.starts_with("st")) &&
         mnemonic[2] >= '1' && mnemonic[2] <= '4';
}

bool isZeroingCacheOp(const cs_insn &insn) {
  const cs_arm64 &a = insn.detail->arm64;
  return a.op_count > 0 && a.operands[0].type == ARM64_OP_SYS && a.operands[0].sys == ARM64_DC_ZVA;
}

// The element size the mnemonic fixes (ldrb, ldrsh, ldrsw, ldpsw, stlxrb, ...), or 0 when the
// data register decides.
uint32_t mnemonicWidth(std::string_view mnemonic) {
  if (mnemonic.ends_with("sw"))
    return 4;
  if (mnemonic.ends_with('b'))
    return 1;
  if (mnemonic.ends_with('h'))
    return 2;
  return 0;
}

// ldr / ldrsw (literal): Capstone gives the resolved address as an immediate.
std::optional<MemoryOperand> literalOperand(const cs_insn &insn, uint64_t pc) {
  const cs_arm64 &a = insn.detail->arm64;
  if ((insn.id != ARM64_INS_LDR && insn.id != ARM64_INS_LDRSW) || a.op_count != 2 ||
      a.operands[0].type != ARM64_OP_REG || a.operands[1].type != ARM64_OP_IMM)
    return std::nullopt;
  MemoryOperand out;
  out.pcRelative = true;
  out.displacement = static_cast<int64_t>(static_cast<uint64_t>(a.operands[1].imm) - pc);
  out.size = insn.id == ARM64_INS_LDRSW ? 4 : registerWidth(a.operands[0].reg);
  out.read = true;
  return out;
}

} // namespace

void describeAArch64(const cs_insn &insn, InstructionInfo &info) {
  classifyBranch(insn, info);
  const std::string_view mnemonic = insn.mnemonic;
  if (isStructureAccess(mnemonic) || isZeroingCacheOp(insn)) {
    info.unusual = true;
    return;
  }
  if (insn.id == ARM64_INS_PRFM || insn.id == ARM64_INS_PRFUM)
    return;
  const cs_arm64 &a = insn.detail->arm64;
  int memIndex = -1;
  for (uint8_t i = 0; i < a.op_count; ++i)
    if (a.operands[i].type == ARM64_OP_MEM)
      memIndex = i;
  if (memIndex < 0) {
    if (std::optional<MemoryOperand> literal = literalOperand(insn, info.address))
      info.memory.push_back(*literal);
    return;
  }
  const cs_arm64_op &op = a.operands[memIndex];
  MemoryOperand out;
  std::optional<AddressRegister> base = addressRegister(op.mem.base);
  if (!base || memIndex == 0) {
    info.unusual = true;
    return;
  }
  out.base = base->index;
  if (op.mem.index == ARM64_REG_XZR || op.mem.index == ARM64_REG_WZR) {
    // Reads as zero: no index.
  } else if (op.mem.index != ARM64_REG_INVALID) {
    std::optional<AddressRegister> index = addressRegister(op.mem.index);
    if (!index) {
      info.unusual = true;
      return;
    }
    out.index = index->index;
    if (op.ext == ARM64_EXT_SXTW)
      out.indexExtend = IndexExtend::Sxtw;
    else if (op.ext == ARM64_EXT_UXTW || index->is32)
      out.indexExtend = IndexExtend::Uxtw;
    out.scale = op.shift.type == ARM64_SFT_LSL ? 1u << op.shift.value : 1u;
  }
  out.displacement = op.mem.disp;
  if (a.writeback) {
    // Capstone 4 gives the post-index amount as a separate immediate after the memory operand.
    const bool post = memIndex + 1 < a.op_count && a.operands[memIndex + 1].type == ARM64_OP_IMM;
    out.writeback = post ? Writeback::PostIndex : Writeback::PreIndex;
    if (post)
      out.displacement = a.operands[memIndex + 1].imm;
  }
  // The register just before the address is the data register (stxr's status register comes
  // first; a pair's two registers have the same width).
  uint32_t element = mnemonicWidth(mnemonic);
  if (element == 0 && a.operands[memIndex - 1].type == ARM64_OP_REG)
    element = registerWidth(a.operands[memIndex - 1].reg);
  if (element == 0) {
    info.unusual = true;
    return;
  }
  out.size = isPair(insn.id) ? 2 * element : element;
  out.read = mnemonic.starts_with("ld");
  out.write = mnemonic.starts_with("st");
  if (!out.read && !out.write) {
    info.unusual = true;
    return;
  }
  info.memory.push_back(out);
}

} // namespace strobe
