#include "isa/StepLanding.h"

#include <cstring>

namespace strobe {

bool stepMayLandAt(const InstructionInfo &insn, std::optional<uint64_t> returnAddress,
                   uint64_t where) {
  const uint64_t next = insn.address + insn.length;
  // A rep string instruction steps one iteration, and stays until its count runs out.
  if (insn.repeated)
    return where == insn.address || where == next;
  switch (insn.kind) {
  case BranchKind::None:
    return where == next;
  case BranchKind::Jump:
  case BranchKind::Call:
    return !insn.target || *insn.target == where;
  case BranchKind::ConditionalJump:
    return !insn.target || *insn.target == where || where == next;
  case BranchKind::Return:
    return !returnAddress || *returnAddress == where;
  case BranchKind::IndirectJump:
  case BranchKind::IndirectCall:
  case BranchKind::Syscall:
    return true;
  }
  return true;
}

std::optional<uint64_t>
returnAddressOf(Isa isa, const InstructionInfo &insn, uint64_t sp,
                const std::function<std::vector<uint8_t>(uint64_t, size_t)> &readMemory) {
  if (insn.kind != BranchKind::Return || isa != Isa::X86_64)
    return std::nullopt;
  const std::vector<uint8_t> top = readMemory(sp, sizeof(uint64_t));
  if (top.size() != sizeof(uint64_t))
    return std::nullopt;
  uint64_t address;
  std::memcpy(&address, top.data(), sizeof(uint64_t));
  return address;
}

} // namespace strobe
