#include "isa/CapstoneGaps.h"

namespace strobe {
namespace {

constexpr size_t kMaxX86Length = 15;

bool isLegacyPrefixAllowedBeforeVex(uint8_t byte) {
  // Address size and segment overrides; 66/f2/f3/REX/lock before VEX or EVEX are #UD.
  return byte == 0x67 || byte == 0x64 || byte == 0x65 || byte == 0x2e || byte == 0x36 ||
         byte == 0x3e || byte == 0x26;
}

// Whether an opcode of a VEX/EVEX opcode map takes an 8-bit immediate (Intel SDM vol. 2, opcode
// maps: all of 0F3A; in 0F the shuffles, immediate shifts, cmpps, pinsrw/pextrw and shufps).
bool hasImmediate(unsigned map, uint8_t opcode) {
  if (map == 3)
    return true;
  if (map == 1)
    return (opcode >= 0x70 && opcode <= 0x73) || (opcode >= 0xc2 && opcode <= 0xc6);
  return false;
}

} // namespace

std::optional<InstructionInfo> describeX86VexGap(std::span<const uint8_t> bytes, uint64_t pc) {
  size_t at = 0;
  while (at < bytes.size() && isLegacyPrefixAllowedBeforeVex(bytes[at]))
    ++at;
  if (at >= bytes.size())
    return std::nullopt;
  unsigned map = 0;
  switch (bytes[at]) {
  case 0xc5: // two-byte VEX: map 0F
    map = 1;
    at += 2;
    break;
  case 0xc4: // three-byte VEX: map in the low five bits of the first payload byte
    if (at + 1 >= bytes.size())
      return std::nullopt;
    map = bytes[at + 1] & 0x1f;
    at += 3;
    break;
  case 0x62: // EVEX: map in the low three bits of P0; P1 bit 2 is always 1
    if (at + 2 >= bytes.size() || (bytes[at + 2] & 0x04) == 0)
      return std::nullopt;
    map = bytes[at + 1] & 0x07;
    at += 4;
    break;
  default:
    return std::nullopt;
  }
  if (map < 1 || map > 3 || at + 1 >= bytes.size())
    return std::nullopt;
  const uint8_t opcode = bytes[at++];
  const uint8_t modrm = bytes[at++];
  const unsigned mod = modrm >> 6, rm = modrm & 7;
  const bool memory = mod != 3;
  if (memory) {
    if (rm == 4) { // SIB
      if (at >= bytes.size())
        return std::nullopt;
      const uint8_t sib = bytes[at++];
      if (mod == 0 && (sib & 7) == 5)
        at += 4;
    } else if (mod == 0 && rm == 5) { // rip-relative
      at += 4;
    }
    at += mod == 1 ? 1 : mod == 2 ? 4 : 0;
  }
  if (hasImmediate(map, opcode))
    ++at;
  if (at > bytes.size() || at > kMaxX86Length)
    return std::nullopt;
  InstructionInfo info;
  info.isa = Isa::X86_64;
  info.address = pc;
  info.length = static_cast<unsigned>(at);
  info.unusual = memory;
  return info;
}

namespace {

// Pointer-authenticating branches (ARMv8.3): the same control flow as ret, br and blr.
std::optional<BranchKind> authenticatedBranch(uint32_t word) {
  if ((word & 0xfffffbff) == 0xd65f0bff) // retaa, retab
    return BranchKind::Return;
  if ((word & 0xfffff81f) == 0xd61f081f || (word & 0xfffff800) == 0xd71f0800) // braaz, braa, ...
    return BranchKind::IndirectJump;
  if ((word & 0xfffff81f) == 0xd63f081f || (word & 0xfffff800) == 0xd73f0800) // blraaz, blraa
    return BranchKind::IndirectCall;
  return std::nullopt;
}

} // namespace

std::optional<InstructionInfo> describeAArch64Gap(std::span<const uint8_t> bytes, uint64_t pc) {
  if (bytes.size() < 4)
    return std::nullopt;
  const uint32_t word = uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 |
                        uint32_t(bytes[3]) << 24;
  InstructionInfo info;
  info.isa = Isa::AArch64;
  info.address = pc;
  info.length = 4;
  if (std::optional<BranchKind> kind = authenticatedBranch(word)) {
    info.kind = *kind;
    return info;
  }
  if ((word & 0xff200400) == 0xf8200400) {
    // ldraa, ldrab: the address is an authenticated pointer, whose signature bits we cannot strip.
    info.unusual = true;
    return info;
  }
  const unsigned size = word >> 30; // log2 of the access size
  const unsigned rn = (word >> 5) & 31;
  MemoryOperand op;
  op.base = rn == 31 ? registerTable(Isa::AArch64).sp : rn;
  op.read = true;
  op.write = true;
  if ((word & 0x3f200c00) == 0x38200000) {
    // Atomic memory operations: size 111 0 00 A R 1 Rs o3 opc 00 Rn Rt.
    const bool o3 = (word >> 15) & 1;
    const unsigned opc = (word >> 12) & 7;
    const unsigned rs = (word >> 16) & 31;
    const bool acquire = (word >> 23) & 1, release = (word >> 22) & 1;
    if (o3 && opc == 4 && rs == 31 && acquire && !release)
      op.write = false; // ldapr
    else if (o3 && opc != 0)
      return std::nullopt; // swp is o3 = 1, opc = 0; the rest is not ours
    op.size = 1u << size;
  } else if ((word & 0x3fa07c00) == 0x08a07c00) {
    // cas: size 001000 1 L 1 Rs o0 11111 Rn Rt.
    op.size = 1u << size;
  } else if ((word & 0xbfa07c00) == 0x08207c00) {
    // casp: 0 sz 001000 0 L 1 Rs o0 11111 Rn Rt, a pair of words or doublewords.
    op.size = 2 * (((word >> 30) & 1) ? 8u : 4u);
  } else {
    return std::nullopt;
  }
  info.memory.push_back(op);
  return info;
}

} // namespace strobe
