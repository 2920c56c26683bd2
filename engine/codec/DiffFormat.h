// The production diff-record stream (spec 001, "Decisions for this project"), byte-oriented and
// self-synchronising. All integers are LEB128 varints unless marked otherwise.
//
// Stream = header, then blocks.
//   header: "SDIF" | version | isa | mainCount | pcIndex | extSlots | keyframeInterval |
//           historyBits | coding | memory-model name length | name bytes | CRC-32 (u32 LE) of
//           all before
//     Registers are 64-bit slots: mainCount raw registers (registerTable order, pc at pcIndex),
//     then extSlots extended-state slots (0: the records carry none).
//     coding: how the records are coded, 0 = stepped (below), 1 = sampled (at the end). Version
//     1 streams have no coding field and are stepped.
//   block:  sync (4 bytes 9E 51 D1 F5) | flags (1 = zlib payload, 2 = follows a gap) | records |
//           stored size | raw size (zlib only) | CRC-32 (u32 LE) of flags..raw size + payload |
//           payload (zlib-compressed when flag 1)
//     A block holds at most keyframeInterval records; the first is a keyframe, each later one is
//     a delta against the record before it. All prediction state restarts with every block, so a
//     reader that meets damage skips to the next sync and loses only the damaged block.
//
// Keyframe record: pc | every other main register | every ext slot | instruction length |
//   instruction bytes | access count | that many escape accesses.
//
// Delta record, against the previous record (`prev`; its pc is `pcBefore`):
//   head byte: bits 0-1 pc code, bits 2-3 register code, bit 4 instruction bytes follow,
//              bit 5 memory section follows, bit 6 every predicted value deviates (register
//              code 1 without its bitmap), bit 7 memory as remembered (below; version 3 on,
//              never with bit 5; zero before).
//   [instruction length | bytes]   (bit 4; else the bytes last seen at pcBefore, or none)
//   [zigzag(pc - pcBefore)]        (pc code 3)
//   register section               (register codes 1 and 2)
//   memory section                 (bit 5)
//   remembered memory's literal values (bit 7)
// Prediction: a table of 2^historyBits entries indexed by a hash of pcBefore remembers, for the
// last record made at that pc, the next pc, the set of changed slots, the first kPredictedDeltas
// of their arithmetic deltas and the instruction bytes. Loops repeat, so most records match it.
//   pc code: 0 = the predicted next pc (fall-through when nothing is remembered), 1 = fall-through
//            (pcBefore + instruction length), 2 = unchanged (rep iterations), 3 = delta follows.
//   register code: 0 = exactly as predicted (changed set and every value), 1 = the predicted set,
//            then a bitmap over its members (ascending) of the values that deviate, then those
//            values; 2 = explicit set: bitmap of main registers with bit mainCount = ext bitmap
//            follows (spec 001's EXT bit), [ext bitmap], then each changed value; 3 = none changed.
//   A value is tagged: first byte bit 0 = XOR against prev, else arithmetic; bits 1-6 the low
//   payload bits, bit 7 = varint(payload >> 6) follows. Arithmetic payloads are
//   zigzag(value - (prev + predicted delta)), so loop counters and strides cost one byte. The
//   encoder writes the smaller of the two payloads.
//   Bitmaps of up to 128 bits are LEB128 numbers.
//   memory section: h = slot bitmap << 1 | escapes follow. Slots are what the memory operand
//     model computes from the instruction bytes, pcBefore and prev's registers: each flagged slot
//     is one access at that slot's address, size and direction, stored as its value(s) only (read
//     value first). Then [count | escape accesses] for what the model does not predict.
//   escape access: zigzag(address - previous escape address in the block) | size | flags (1 read,
//     2 write) | value(s).
//   value: source code | bytes. Code 0 = `size` raw bytes follow; 1..n = equals the little-endian
//     bytes of this record's slots from code - 1; n+1..2n = of prev's slots from code - n - 1
//     (n = mainCount + extSlots; sizes up to 16, i.e. two slots). Loads land in registers and
//     stores come from them, so most values cost one byte.
//   Memory as remembered (version 3): a loop's instruction accesses memory the same way every
//   time, so the table entry also remembers, once a record at a known pc with its instruction
//   bytes not stored (the second time there) has a memory section in which every access is one
//   of the model's slots, in order, all of them, at most kMaxFormulas, and every value a literal
//   or one of this record's slots: the model's formulas for the instruction's accesses (see
//   MemoryOperandModel::formulas) and each value's source code. A later record there, its
//   instruction bytes again not stored, whose accesses are at the formulas' addresses (computed
//   from prev's registers) with their sizes and directions, and whose values are in the same
//   sources, sets bit 7 and stores only its literal values' bytes, after the register section.
//   A record with a memory section re-learns the entry's memory (or forgets it); one whose
//   instruction bytes are stored forgets it.
//
// Sampled coding, for register samples (main registers only: extSlots 0; no instruction bytes,
// no memory). No prediction table: every record, the keyframe included, is coded against the
// previous record of its block, the keyframe against all-zero registers.
//   record: changed bitmap in ceil(mainCount / 8) bytes, little-endian (bit s: register s
//     differs) | one nibble per changed register, ascending, two a byte, low nibble first, an
//     odd last one padded with 0 | each changed register's payload, ascending, in (nibble bits
//     1-3) + 1 little-endian bytes.
//   nibble bit 0: the payload is value XOR previous, else zigzag(value - previous); the encoder
//     writes the form whose payload is smaller (XOR only when strictly smaller).
//   Lengths sit apart from the payloads, so a reader knows where every payload starts before it
//   reads one, and vector instructions pack and unpack eight registers at a time (SampleCoder.h).
#pragma once

#include "codec/Varint.h"
#include "target/Isa.h"

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace strobe {

inline constexpr std::array<uint8_t, 4> kDiffMagic = {'S', 'D', 'I', 'F'};
inline constexpr uint32_t kDiffVersion = 3;
inline constexpr uint32_t kOldestDiffVersion = 1; // the oldest this strobe reads
inline constexpr std::array<uint8_t, 4> kBlockSync = {0x9e, 0x51, 0xd1, 0xf5};

inline constexpr unsigned kMaxMainSlots = 63; // one bit stays free for the EXT flag
inline constexpr unsigned kMaxSlots = 128;
inline constexpr unsigned kPredictedDeltas = 8;
inline constexpr unsigned kMaxHistoryBits = 16;
inline constexpr uint32_t kMaxKeyframeInterval = 1u << 20;
inline constexpr size_t kMaxBlockBytes = 16u << 20; // raw payload
inline constexpr size_t kMaxInstructionBytes = 64;
inline constexpr size_t kMaxAccesses = 1024; // per record
inline constexpr uint32_t kMaxAccessBytes = 1u << 16;
inline constexpr size_t kMaxRecordMemoryBytes = 1u << 20; // all accesses of one record
inline constexpr size_t kBlockTargetBytes = 1u << 20;     // a block closes once this large
inline constexpr size_t kMaxModelName = 255;

enum BlockFlag : uint64_t { kBlockCompressed = 1, kBlockAfterGap = 2 };

enum HeadBits : uint8_t {
  kPcMask = 0x03,
  kRegShift = 2,
  kRegMask = 0x0c,
  kInstructionFollows = 0x10,
  kMemoryFollows = 0x20,
  kAllDeviate = 0x40,
  kMemoryRemembered = 0x80, // version 3 on; never with kMemoryFollows
};
enum PcCode : uint8_t { kPcPredicted, kPcFallThrough, kPcUnchanged, kPcDelta };
enum RegCode : uint8_t { kRegsPredicted, kRegsDeviate, kRegsExplicit, kRegsNone };

enum AccessFlag : uint8_t { kAccessRead = 1, kAccessWrite = 2 };

// How a stream's records are coded (see the format above).
enum class RecordCoding : uint8_t {
  Stepped, // records one instruction apart, predicted from what the last one at their pc did
  Sampled, // register samples far apart
};

// Which slots a stream's records hold.
struct StreamLayout {
  Isa isa = Isa::X86_64;
  unsigned mainCount = 0;
  unsigned pcIndex = 0;
  unsigned extSlots = 0;

  unsigned slots() const { return mainCount + extSlots; }
  friend bool operator==(const StreamLayout &, const StreamLayout &) = default;
};

// registerTable(isa), with or without its extended state.
StreamLayout layoutFor(Isa isa, bool withExt);

struct StreamHeader {
  uint32_t version = kDiffVersion;
  StreamLayout layout;
  uint32_t keyframeInterval = 4096;
  unsigned historyBits = 12;
  RecordCoding coding = RecordCoding::Stepped;
  std::string memoryModel; // what computed the memory slots; empty: escape form only

  friend bool operator==(const StreamHeader &, const StreamHeader &) = default;
};

void putLe32(uint32_t value, std::vector<uint8_t> &out);
uint32_t getLe32(std::span<const uint8_t> bytes); // the first 4 bytes, which must exist

void writeStreamHeader(const StreamHeader &header, std::vector<uint8_t> &out);
// Reads a header from the front of `in` and advances past it; the reason it is unusable if not.
std::optional<std::string> readStreamHeader(std::span<const uint8_t> &in, StreamHeader &header);

// std::popcount without -mpopcnt is a libgcc call; this is a few inline instructions.
inline unsigned popcount64(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<unsigned>((x * 0x0101010101010101ull) >> 56);
}

// A set of slots (up to kMaxSlots).
struct SlotMask {
  std::array<uint64_t, 2> words{};

  void set(unsigned slot) { words[slot / 64] |= uint64_t{1} << (slot % 64); }
  bool test(unsigned slot) const { return (words[slot / 64] >> (slot % 64)) & 1; }
  bool empty() const { return (words[0] | words[1]) == 0; }
  unsigned count() const { return popcount64(words[0]) + (words[1] ? popcount64(words[1]) : 0); }
  // Whether every member is below `n`.
  bool below(unsigned n) const {
    if (n >= 64)
      return n >= kMaxSlots || (words[1] >> (n - 64)) == 0;
    return (words[0] >> n) == 0 && words[1] == 0;
  }
  // Members below `slot`.
  unsigned rank(unsigned slot) const {
    const uint64_t below = (uint64_t{1} << (slot % 64)) - 1;
    return slot < 64 ? popcount64(words[0] & below)
                     : popcount64(words[0]) + popcount64(words[1] & below);
  }
  // Calls f(slot) for each member, ascending.
  template <typename F> void forEach(F &&f) const {
    for (uint64_t bits = words[0]; bits; bits &= bits - 1)
      f(static_cast<unsigned>(std::countr_zero(bits)));
    for (uint64_t bits = words[1]; bits; bits &= bits - 1)
      [[unlikely]] f(64 + static_cast<unsigned>(std::countr_zero(bits)));
  }
  friend bool operator==(const SlotMask &, const SlotMask &) = default;
  friend SlotMask operator|(const SlotMask &a, const SlotMask &b) {
    return {{a.words[0] | b.words[0], a.words[1] | b.words[1]}};
  }
};

// 128-bit numbers as LEB128, for bitmaps that may exceed 64 bits.
uint8_t *writeWideVarint(const SlotMask &value, uint8_t *out); // room for 19 bytes
bool getWideVarint(std::span<const uint8_t> &in, SlotMask &value);

// Tagged values (see the format above). The writers need room for 10 bytes at `out` and return
// the end of what they wrote.
inline uint8_t *writeTagged(uint64_t payload, bool xorForm, uint8_t *out) {
  const uint64_t rest = payload >> 6;
  *out++ = static_cast<uint8_t>((rest ? 0x80 : 0) | (payload & 0x3f) << 1 | xorForm);
  return rest ? writeVarint(rest, out) : out;
}
// A tagged value is one LEB128 number, the payload above the form bit, so reading it is one
// getShortVarint: a sample's values are 1 to 6 bytes long in no order a branch predicts, and a
// loop per byte had cost a misprediction per value (decoding chase-loop samples ran at 17.7
// million records a second, now 23.5).
inline bool getTagged(std::span<const uint8_t> &in, uint64_t &payload, bool &xorForm) {
  if (in.size() >= 8) [[likely]] {
    uint64_t joined = 0;
    if (getShortVarint(in, joined)) {
      xorForm = joined & 1;
      payload = joined >> 1;
      return true;
    }
  }
  if (in.empty())
    return false;
  const uint8_t first = in[0];
  in = in.subspan(1);
  xorForm = first & 1;
  payload = (first >> 1) & 0x3f;
  if (!(first & 0x80)) [[likely]]
    return true;
  uint64_t rest = 0;
  if (!getVarint(in, rest) || rest >> 58)
    return false;
  payload |= rest << 6;
  return true;
}

// The prediction table slot for records made at `pc`.
inline size_t historyIndex(uint64_t pc, unsigned historyBits) {
  const uint64_t mixed = (pc ^ (pc >> 29)) * 0x9e3779b97f4a7c15ull;
  return historyBits == 0 ? 0 : static_cast<size_t>(mixed >> (64 - historyBits));
}

} // namespace strobe
