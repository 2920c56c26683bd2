// x86-64: branch kinds from the instruction id, memory operands from Capstone's operands plus the
// stack slot that push/pop/call/ret/leave/pushf/popf access without naming it.
#include "isa/CapstoneDescribe.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>
#include <utility>

namespace strobe {
namespace {

// Every name asked for is in the table.
unsigned tableIndex(std::string_view name) { return *registerTable(Isa::X86_64).indexOf(name); }

struct AddressRegister {
  unsigned index; // in the register table
  bool is32;      // eax..r15d: the address-size prefix is in effect
};

// General-purpose registers as address components. Anything else (a vector index: gathers and
// scatters) is not something a register snapshot can resolve.
std::optional<AddressRegister> addressRegister(x86_reg reg) {
  static const auto kRegs = [] {
    constexpr std::array<std::pair<x86_reg, x86_reg>, 16> pairs = {{
        {X86_REG_RAX, X86_REG_EAX},
        {X86_REG_RBX, X86_REG_EBX},
        {X86_REG_RCX, X86_REG_ECX},
        {X86_REG_RDX, X86_REG_EDX},
        {X86_REG_RSI, X86_REG_ESI},
        {X86_REG_RDI, X86_REG_EDI},
        {X86_REG_RBP, X86_REG_EBP},
        {X86_REG_RSP, X86_REG_ESP},
        {X86_REG_R8, X86_REG_R8D},
        {X86_REG_R9, X86_REG_R9D},
        {X86_REG_R10, X86_REG_R10D},
        {X86_REG_R11, X86_REG_R11D},
        {X86_REG_R12, X86_REG_R12D},
        {X86_REG_R13, X86_REG_R13D},
        {X86_REG_R14, X86_REG_R14D},
        {X86_REG_R15, X86_REG_R15D},
    }};
    constexpr std::array<std::string_view, 16> names = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi",
                                                        "rbp", "rsp", "r8",  "r9",  "r10", "r11",
                                                        "r12", "r13", "r14", "r15"};
    std::array<std::pair<std::pair<x86_reg, x86_reg>, unsigned>, 16> out{};
    for (size_t i = 0; i < pairs.size(); ++i)
      out[i] = {pairs[i], tableIndex(names[i])};
    return out;
  }();
  for (const auto &[regs, index] : kRegs) {
    if (regs.first == reg)
      return AddressRegister{index, false};
    if (regs.second == reg)
      return AddressRegister{index, true};
  }
  return std::nullopt;
}

bool hasGroup(const cs_detail &detail, uint8_t group) {
  return std::find(detail.groups, detail.groups + detail.groups_count, group) !=
         detail.groups + detail.groups_count;
}

void classifyBranch(const cs_insn &insn, InstructionInfo &info) {
  const cs_x86 &x = insn.detail->x86;
  std::optional<uint64_t> imm;
  if (x.op_count > 0 && x.operands[0].type == X86_OP_IMM)
    imm = static_cast<uint64_t>(x.operands[0].imm);
  switch (insn.id) {
  case X86_INS_JMP:
    info.kind = imm ? BranchKind::Jump : BranchKind::IndirectJump;
    info.target = imm;
    return;
  case X86_INS_LJMP:
    info.kind = BranchKind::IndirectJump;
    return;
  case X86_INS_CALL:
    info.kind = imm ? BranchKind::Call : BranchKind::IndirectCall;
    info.target = imm;
    return;
  case X86_INS_LCALL:
    info.kind = BranchKind::IndirectCall;
    return;
  case X86_INS_SYSCALL:
  case X86_INS_SYSENTER:
  case X86_INS_INT: // int 0x80 and friends enter the kernel and come back
    info.kind = BranchKind::Syscall;
    return;
  case X86_INS_INT3: // a trap to the debugger, not control flow of the program
  case X86_INS_INTO:
    return;
  default:
    break;
  }
  const cs_detail &detail = *insn.detail;
  if (hasGroup(detail, CS_GRP_RET) || hasGroup(detail, CS_GRP_IRET)) {
    info.kind = BranchKind::Return;
  } else if (imm && (hasGroup(detail, CS_GRP_JUMP) || hasGroup(detail, CS_GRP_BRANCH_RELATIVE))) {
    // jcc, jrcxz, loop*, xbegin: relative branches that fall through when not taken.
    info.kind = BranchKind::ConditionalJump;
    info.target = imm;
  }
}

bool isStringInstruction(const cs_insn &insn) {
  switch (insn.id) {
  case X86_INS_MOVSB:
  case X86_INS_MOVSW:
  case X86_INS_MOVSQ:
  case X86_INS_STOSB:
  case X86_INS_STOSW:
  case X86_INS_STOSD:
  case X86_INS_STOSQ:
  case X86_INS_LODSB:
  case X86_INS_LODSW:
  case X86_INS_LODSD:
  case X86_INS_LODSQ:
  case X86_INS_CMPSB:
  case X86_INS_CMPSW:
  case X86_INS_CMPSQ:
  case X86_INS_SCASB:
  case X86_INS_SCASW:
  case X86_INS_SCASD:
  case X86_INS_SCASQ:
  case X86_INS_INSB:
  case X86_INS_INSW:
  case X86_INS_INSD:
  case X86_INS_OUTSB:
  case X86_INS_OUTSW:
  case X86_INS_OUTSD:
    return true;
  case X86_INS_MOVSD: // also SSE2 movsd / cmpsd on xmm registers, which take no rep
  case X86_INS_CMPSD: {
    const cs_x86 &x = insn.detail->x86;
    for (uint8_t i = 0; i < x.op_count; ++i)
      if (x.operands[i].type == X86_OP_REG && x.operands[i].size == 16)
        return false;
    return true;
  }
  default:
    return false;
  }
}

// Instructions whose accesses a base + index + displacement formula cannot describe.
bool isUnusual(const cs_insn &insn) {
  const cs_x86 &x = insn.detail->x86;
  switch (insn.id) {
  case X86_INS_XSAVE:
  case X86_INS_XSAVE64:
  case X86_INS_XSAVEC:
  case X86_INS_XSAVEC64:
  case X86_INS_XSAVEOPT:
  case X86_INS_XSAVEOPT64:
  case X86_INS_XSAVES:
  case X86_INS_XSAVES64:
  case X86_INS_XRSTOR:
  case X86_INS_XRSTOR64:
  case X86_INS_XRSTORS:
  case X86_INS_XRSTORS64:
  case X86_INS_FXSAVE:
  case X86_INS_FXSAVE64:
  case X86_INS_FXRSTOR:
  case X86_INS_FXRSTOR64:
  case X86_INS_FNSAVE:
  case X86_INS_FRSTOR:
  case X86_INS_FNSTENV:
  case X86_INS_FLDENV:
  case X86_INS_XLATB: // [rbx + al]
  case X86_INS_ENTER: // copies a variable number of frame pointers
  case X86_INS_LCALL: // far transfers push or pop a segment selector too
  case X86_INS_RETF:
  case X86_INS_RETFQ:
  case X86_INS_IRET:
  case X86_INS_IRETD:
  case X86_INS_IRETQ:
  case X86_INS_MASKMOVQ:
  case X86_INS_MASKMOVDQU:
  case X86_INS_VMASKMOVDQU:
  case X86_INS_VMASKMOVPS:
  case X86_INS_VMASKMOVPD:
  case X86_INS_VPMASKMOVD:
  case X86_INS_VPMASKMOVQ:
    return true;
  case X86_INS_BT:
  case X86_INS_BTS:
  case X86_INS_BTR:
  case X86_INS_BTC:
    // A register bit offset reaches memory outside the named operand.
    return x.op_count == 2 && x.operands[0].type == X86_OP_MEM && x.operands[1].type == X86_OP_REG;
  default:
    break;
  }
  // An AVX-512 write mask ({k1}) leaves some elements unaccessed.
  return std::strstr(insn.op_str, "{k") != nullptr;
}

// Operands that only compute an address: nothing is read or written there.
bool isAddressOnly(unsigned id) {
  switch (id) {
  case X86_INS_LEA:
  case X86_INS_NOP:
  case X86_INS_PREFETCH:
  case X86_INS_PREFETCHNTA:
  case X86_INS_PREFETCHT0:
  case X86_INS_PREFETCHT1:
  case X86_INS_PREFETCHT2:
  case X86_INS_PREFETCHW:
  case X86_INS_CLFLUSH:
  case X86_INS_CLFLUSHOPT:
  case X86_INS_CLWB:
    return true;
  default:
    return false;
  }
}

// Capstone 4's access tables get many of these wrong: cmpxchg's destination reads as a plain
// read, and most stores from vector and x87 registers (movups [m], xmm; vmovdqu64 [m], zmm;
// fstp [m]; movnti [m], r) as reads. MemoryModelStepTest finds them on a real process.
bool isReadModifyWrite(unsigned id) {
  return id == X86_INS_CMPXCHG || id == X86_INS_CMPXCHG8B || id == X86_INS_CMPXCHG16B;
}

// Families whose memory operand, when it is the first operand, is the destination of a store.
bool isStoreWhenFirst(std::string_view mnemonic) {
  constexpr std::string_view kFamilies[] = {
      "mov",       "vmov",       "vpmov",   "vextract", "extractps", "pextr", "vpextr", "vcvtps2ph",
      "vcompress", "vpcompress", "stmxcsr", "vstmxcsr", "fst",       "fist",  "fnst",   "fbstp"};
  for (std::string_view family : kFamilies)
    if (mnemonic.starts_with(family))
      return true;
  return false;
}

std::optional<MemoryOperand> explicitOperand(const cs_insn &insn, const cs_x86_op &op, bool first,
                                             unsigned stackPointer) {
  const x86_op_mem &mem = op.mem;
  MemoryOperand out;
  if (mem.base == X86_REG_RIP) {
    out.pcRelative = true;
  } else if (mem.base != X86_REG_INVALID) {
    std::optional<AddressRegister> base = addressRegister(static_cast<x86_reg>(mem.base));
    if (!base)
      return std::nullopt;
    out.base = base->index;
    out.address32 = base->is32;
  }
  if (mem.index != X86_REG_INVALID) {
    std::optional<AddressRegister> index = addressRegister(static_cast<x86_reg>(mem.index));
    if (!index)
      return std::nullopt;
    out.index = index->index;
    out.address32 = out.address32 || index->is32;
  }
  out.scale = static_cast<uint32_t>(mem.scale);
  out.displacement = mem.disp;
  out.address32 = out.address32 || insn.detail->x86.addr_size == 4;
  if (mem.segment == X86_REG_FS)
    out.segmentBase = tableIndex("fs_base");
  else if (mem.segment == X86_REG_GS)
    out.segmentBase = tableIndex("gs_base");
  out.size = op.size;
  out.read = (op.access & CS_AC_READ) != 0;
  out.write = (op.access & CS_AC_WRITE) != 0;
  if (isReadModifyWrite(insn.id)) {
    out.read = out.write = true;
  } else if (first && !out.write && isStoreWhenFirst(insn.mnemonic)) {
    out.read = false;
    out.write = true;
  } else if (!out.read && !out.write) {
    out.read = true;
  }
  // pop [rsp + d] computes its address after the pop has raised rsp (Intel SDM, POP).
  if (insn.id == X86_INS_POP && out.base == stackPointer)
    out.displacement += op.size;
  if (out.size == 0)
    return std::nullopt;
  return out;
}

// The stack slot an instruction touches without naming it, relative to the pre-execution rsp.
std::optional<MemoryOperand> implicitStackOperand(const cs_insn &insn) {
  const RegisterTable &table = registerTable(Isa::X86_64);
  // An operand-size prefix makes push/pop/pushf/popf move two bytes.
  uint32_t width = insn.detail->x86.prefix[2] == X86_PREFIX_OPSIZE ? 2 : 8;
  MemoryOperand out;
  out.implicit = true;
  out.base = table.sp;
  switch (insn.id) {
  case X86_INS_PUSH:
  case X86_INS_PUSHF:
  case X86_INS_PUSHFQ:
    out.displacement = -static_cast<int64_t>(width);
    out.size = width;
    out.write = true;
    return out;
  case X86_INS_CALL:
    out.displacement = -8;
    out.size = 8;
    out.write = true;
    return out;
  case X86_INS_POP:
  case X86_INS_POPF:
  case X86_INS_POPFQ:
    out.size = width;
    out.read = true;
    return out;
  case X86_INS_RET:
    out.size = 8;
    out.read = true;
    return out;
  case X86_INS_LEAVE: // mov rsp, rbp; pop rbp
    out.base = table.fp;
    out.size = 8;
    out.read = true;
    return out;
  default:
    return std::nullopt;
  }
}

} // namespace

void describeX86(const cs_insn &insn, InstructionInfo &info) {
  classifyBranch(insn, info);
  if (isUnusual(insn)) {
    info.unusual = true;
    return;
  }
  const cs_x86 &x = insn.detail->x86;
  const unsigned stackPointer = registerTable(Isa::X86_64).sp;
  if (!isAddressOnly(insn.id)) {
    for (uint8_t i = 0; i < x.op_count; ++i) {
      if (x.operands[i].type != X86_OP_MEM)
        continue;
      std::optional<MemoryOperand> op = explicitOperand(insn, x.operands[i], i == 0, stackPointer);
      if (!op) {
        info.unusual = true;
        info.memory.clear();
        return;
      }
      info.memory.push_back(*op);
    }
  }
  if (std::optional<MemoryOperand> stack = implicitStackOperand(insn))
    info.memory.push_back(*stack);
  if ((x.prefix[0] == X86_PREFIX_REP || x.prefix[0] == X86_PREFIX_REPNE) &&
      isStringInstruction(insn))
    info.unusual = info.repeated = true;
}

} // namespace strobe
