#include "NextPc.h"

#include "isa/X86JumpCondition.h"

#include <capstone/capstone.h>

#include <algorithm>

namespace strobe::gdb {
namespace {

// Capstone's 64-bit x86 registers as indices of the engine's x86-64 register table.
std::optional<unsigned> tableIndex(x86_reg reg) {
  switch (reg) {
  case X86_REG_RAX:
    return 0;
  case X86_REG_RBX:
    return 1;
  case X86_REG_RCX:
    return 2;
  case X86_REG_RDX:
    return 3;
  case X86_REG_RSI:
    return 4;
  case X86_REG_RDI:
    return 5;
  case X86_REG_RBP:
    return 6;
  case X86_REG_RSP:
    return 7;
  case X86_REG_R8:
    return 8;
  case X86_REG_R9:
    return 9;
  case X86_REG_R10:
    return 10;
  case X86_REG_R11:
    return 11;
  case X86_REG_R12:
    return 12;
  case X86_REG_R13:
    return 13;
  case X86_REG_R14:
    return 14;
  case X86_REG_R15:
    return 15;
  case X86_REG_EFLAGS:
    return 17;
  case X86_REG_FS:
    return 18; // fs_base
  case X86_REG_GS:
    return 19; // gs_base
  default:
    return std::nullopt;
  }
}

bool inGroup(const cs_insn &insn, uint8_t group) {
  const cs_detail &d = *insn.detail;
  return std::find(d.groups, d.groups + d.groups_count, group) != d.groups + d.groups_count;
}

bool leftToGdb(const cs_insn &insn) {
  switch (insn.id) {
  case X86_INS_SYSCALL: // may exit, clone, exec or block: GDB must see those
  case X86_INS_SYSENTER:
  case X86_INS_INT:
  case X86_INS_INT1:
  case X86_INS_INT3: // a breakpoint inserted in memory, or the program's own trap
  case X86_INS_INTO:
  case X86_INS_UD0:
  case X86_INS_UD2:
  case X86_INS_UD2B:
  case X86_INS_HLT:
    return true;
  default:
    return inGroup(insn, X86_GRP_INT) || inGroup(insn, X86_GRP_IRET) ||
           inGroup(insn, X86_GRP_PRIVILEGE);
  }
}

// The value of a register or memory operand: where an indirect jump or call goes.
std::optional<uint64_t> operandValue(const cs_insn &insn, const cs_x86_op &op,
                                     const std::vector<uint64_t> &regs, const ReadMemory &read) {
  auto reg = [&](x86_reg r) -> std::optional<uint64_t> {
    if (r == X86_REG_INVALID)
      return 0;
    if (r == X86_REG_RIP)
      return insn.address + insn.size;
    std::optional<unsigned> index = tableIndex(r);
    if (!index || *index >= regs.size())
      return std::nullopt;
    return regs[*index];
  };
  if (op.type == X86_OP_REG)
    return op.size == 8 ? reg(op.reg) : std::nullopt;
  if (op.type != X86_OP_MEM || op.size != 8)
    return std::nullopt;
  auto base = reg(op.mem.base), index = reg(op.mem.index), segment = reg(op.mem.segment);
  if (!base || !index || !segment)
    return std::nullopt;
  uint64_t address = *segment + *base + *index * static_cast<uint64_t>(op.mem.scale) +
                     static_cast<uint64_t>(op.mem.disp);
  uint64_t target = 0;
  if (!read(address, &target, 8))
    return std::nullopt;
  return target;
}

} // namespace

NextPc::NextPc(Isa isa) {
  csh handle = 0;
  if (isa != Isa::X86_64 || cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK)
    return;
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  handle_ = handle;
}

NextPc::~NextPc() {
  if (handle_) {
    csh handle = handle_;
    cs_close(&handle);
  }
}

std::optional<std::vector<uint64_t>> NextPc::candidates(std::span<const uint8_t> code, uint64_t pc,
                                                        const std::vector<uint64_t> &regs,
                                                        const ReadMemory &read) {
  if (!handle_)
    return std::nullopt;
  cs_insn *insn = nullptr;
  size_t count = cs_disasm(handle_, code.data(), code.size(), pc, 1, &insn);
  if (count == 0)
    return std::nullopt;
  struct Free {
    cs_insn *insn;
    ~Free() { cs_free(insn, 1); }
  } free{insn};

  if (leftToGdb(*insn))
    return std::nullopt;
  std::vector<uint64_t> next;
  const cs_x86 &x86 = insn->detail->x86;
  uint64_t fallThrough = pc + insn->size;
  if (inGroup(*insn, X86_GRP_RET)) {
    uint64_t target = 0;
    if (regs.size() <= 7 || !read(regs[7], &target, 8)) // [rsp]
      return std::nullopt;
    next.push_back(target);
  } else if (inGroup(*insn, X86_GRP_JUMP) || inGroup(*insn, X86_GRP_CALL)) {
    if (x86.op_count < 1)
      return std::nullopt;
    const cs_x86_op &op = x86.operands[0];
    // A conditional jump goes one way, which the flags tell: its other way is no candidate.
    // (With the fall-through a candidate of every jump and call, a breakpoint or an --until
    // location after a loop had sent each iteration's jump to GDB.)
    const unsigned flags = *tableIndex(X86_REG_EFLAGS), count = *tableIndex(X86_REG_RCX);
    const std::optional<bool> taken =
        regs.size() > flags ? x86JumpTaken(insn->id, regs[flags], regs[count]) : std::nullopt;
    const bool mayJump = taken.value_or(true), mayFallThrough = !taken.value_or(false);
    if (op.type == X86_OP_IMM) {
      if (mayJump)
        next.push_back(static_cast<uint64_t>(op.imm));
    } else {
      std::optional<uint64_t> target = operandValue(*insn, op, regs, read);
      if (!target)
        return std::nullopt;
      next.push_back(*target);
    }
    if (mayFallThrough)
      next.push_back(fallThrough); // conditional jumps not taken, and harmless for the others
  } else {
    next.push_back(fallThrough);
  }
  if (x86.prefix[0] == X86_PREFIX_REP || x86.prefix[0] == X86_PREFIX_REPNE)
    next.push_back(pc); // a repeated string instruction steps one iteration at a time
  return next;
}

} // namespace strobe::gdb
