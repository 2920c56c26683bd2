#include "isa/X86JumpCondition.h"

#include <capstone/capstone.h>

namespace strobe {

std::optional<bool> x86JumpTaken(unsigned instructionId, uint64_t rflags, uint64_t rcx) {
  const bool cf = rflags & 0x1, pf = rflags & 0x4, zf = rflags & 0x40, sf = rflags & 0x80,
             of = rflags & 0x800;
  switch (instructionId) {
  case X86_INS_JO:
    return of;
  case X86_INS_JNO:
    return !of;
  case X86_INS_JB:
    return cf;
  case X86_INS_JAE:
    return !cf;
  case X86_INS_JE:
    return zf;
  case X86_INS_JNE:
    return !zf;
  case X86_INS_JBE:
    return cf || zf;
  case X86_INS_JA:
    return !cf && !zf;
  case X86_INS_JS:
    return sf;
  case X86_INS_JNS:
    return !sf;
  case X86_INS_JP:
    return pf;
  case X86_INS_JNP:
    return !pf;
  case X86_INS_JL:
    return sf != of;
  case X86_INS_JGE:
    return sf == of;
  case X86_INS_JLE:
    return zf || sf != of;
  case X86_INS_JG:
    return !zf && sf == of;
  case X86_INS_JECXZ:
    return static_cast<uint32_t>(rcx) == 0;
  case X86_INS_JRCXZ:
    return rcx == 0;
  default:
    return std::nullopt;
  }
}

} // namespace strobe
