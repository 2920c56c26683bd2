#include "isa/StepLanding.h"

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

} // namespace strobe
