#include "codec/DiffFormat.h"

#include "codec/Crc32.h"
#include "codec/Varint.h"

#include <algorithm>

namespace strobe {

StreamLayout layoutFor(Isa isa, bool withExt) {
  const RegisterTable &table = registerTable(isa);
  return {isa, static_cast<unsigned>(table.regs.size()), table.pc,
          withExt ? static_cast<unsigned>(table.extSlots()) : 0u};
}

namespace {

constexpr size_t kCrcBytes = 4;

} // namespace

void putLe32(uint32_t value, std::vector<uint8_t> &out) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint32_t getLe32(std::span<const uint8_t> bytes) {
  return uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 | uint32_t{bytes[2]} << 16 |
         uint32_t{bytes[3]} << 24;
}

void writeStreamHeader(const StreamHeader &header, std::vector<uint8_t> &out) {
  const size_t start = out.size();
  out.insert(out.end(), kDiffMagic.begin(), kDiffMagic.end());
  putVarint(header.version, out);
  putVarint(static_cast<uint64_t>(header.layout.isa), out);
  putVarint(header.layout.mainCount, out);
  putVarint(header.layout.pcIndex, out);
  putVarint(header.layout.extSlots, out);
  putVarint(header.keyframeInterval, out);
  putVarint(header.historyBits, out);
  if (header.version >= 2)
    putVarint(static_cast<uint64_t>(header.coding), out);
  putVarint(header.memoryModel.size(), out);
  out.insert(out.end(), header.memoryModel.begin(), header.memoryModel.end());
  putLe32(crc32(std::span(out).subspan(start)), out);
}

std::optional<std::string> readStreamHeader(std::span<const uint8_t> &in, StreamHeader &header) {
  if (in.size() < kDiffMagic.size() ||
      !std::equal(kDiffMagic.begin(), kDiffMagic.end(), in.begin()))
    return in.size() < kDiffMagic.size() ? "truncated stream header" : "not a diff-record stream";
  std::span<const uint8_t> rest = in.subspan(kDiffMagic.size());
  uint64_t version, isa, mainCount, pcIndex, extSlots, interval, historyBits, nameSize;
  uint64_t coding = static_cast<uint64_t>(RecordCoding::Stepped);
  if (!getVarint(rest, version))
    return "truncated stream header";
  if (version < kOldestDiffVersion || version > kDiffVersion)
    return "diff-record stream version " + std::to_string(version) + "; this strobe reads " +
           std::to_string(kOldestDiffVersion) + " to " + std::to_string(kDiffVersion);
  if (!getVarint(rest, isa) || !getVarint(rest, mainCount) || !getVarint(rest, pcIndex) ||
      !getVarint(rest, extSlots) || !getVarint(rest, interval) || !getVarint(rest, historyBits) ||
      (version >= 2 && !getVarint(rest, coding)) || !getVarint(rest, nameSize) ||
      nameSize > rest.size() || rest.size() - nameSize < kCrcBytes)
    return "truncated stream header";
  const size_t headerSize = in.size() - rest.size() + nameSize;
  if (getLe32(rest.subspan(nameSize)) != crc32(in.first(headerSize)))
    return "CRC mismatch in the stream header";
  if (isa != static_cast<uint64_t>(Isa::X86_64) && isa != static_cast<uint64_t>(Isa::AArch64))
    return "unknown ISA " + std::to_string(isa);
  if (mainCount == 0 || mainCount > kMaxMainSlots || pcIndex >= mainCount ||
      extSlots > kMaxSlots - mainCount)
    return "impossible register layout";
  if (interval == 0 || interval > kMaxKeyframeInterval || historyBits > kMaxHistoryBits ||
      nameSize > kMaxModelName)
    return "impossible stream parameters";
  if (coding > static_cast<uint64_t>(RecordCoding::Sampled))
    return "unknown record coding " + std::to_string(coding);
  if (coding == static_cast<uint64_t>(RecordCoding::Sampled) && extSlots != 0)
    return "sampled records with extended state";
  header.version = static_cast<uint32_t>(version);
  header.layout = {static_cast<Isa>(isa), static_cast<unsigned>(mainCount),
                   static_cast<unsigned>(pcIndex), static_cast<unsigned>(extSlots)};
  header.keyframeInterval = static_cast<uint32_t>(interval);
  header.historyBits = static_cast<unsigned>(historyBits);
  header.coding = static_cast<RecordCoding>(coding);
  header.memoryModel.assign(rest.begin(), rest.begin() + static_cast<ptrdiff_t>(nameSize));
  in = rest.subspan(nameSize + kCrcBytes);
  return std::nullopt;
}

uint8_t *writeWideVarint(const SlotMask &value, uint8_t *out) {
  uint64_t low = value.words[0], high = value.words[1];
  while (high != 0 || low >= 0x80) {
    *out++ = static_cast<uint8_t>(low | 0x80);
    low = low >> 7 | high << 57;
    high >>= 7;
  }
  *out++ = static_cast<uint8_t>(low);
  return out;
}

bool getWideVarint(std::span<const uint8_t> &in, SlotMask &value) {
  value = {};
  constexpr size_t kMaxBytes = (128 + 6) / 7;
  for (size_t i = 0; i < in.size() && i < kMaxBytes; ++i) {
    const uint64_t bits = in[i] & 0x7f;
    const unsigned shift = static_cast<unsigned>(7 * i);
    if (i == kMaxBytes - 1 && bits > 0x3)
      return false; // beyond 128 bits
    if (shift < 64) {
      value.words[0] |= bits << shift;
      if (shift > 57)
        value.words[1] |= bits >> (64 - shift);
    } else {
      value.words[1] |= bits << (shift - 64);
    }
    if ((in[i] & 0x80) == 0) {
      in = in.subspan(i + 1);
      return true;
    }
  }
  return false;
}

} // namespace strobe
