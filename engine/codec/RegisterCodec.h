// How a thread's register vectors become bytes in a trace file. One codec instance encodes one
// stream (one thread's consecutive samples): each record is encoded against the stream's previous
// one, and reset() makes the next record a keyframe that stands alone. The trace header names the
// codec and its version so a reader can pick the matching decoder.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace strobe {

class RegisterCodec {
public:
  virtual ~RegisterCodec() = default;

  virtual std::string_view name() const = 0;
  virtual uint32_t version() const = 0;

  // The next record (encoded or decoded) is a keyframe.
  virtual void reset() = 0;
  // Appends one record for `regs` to `out`. `regs` has the codec's register count.
  virtual void encode(std::span<const uint64_t> regs, std::vector<uint8_t> &out) = 0;
  // Decodes one record from the front of `in` into `regs` and advances `in` past it. Returns false
  // when the bytes are not a valid record; the stream then needs reset() before further use.
  virtual bool decode(std::span<const uint8_t> &in, std::vector<uint64_t> &regs) = 0;
};

// The byte primitives codecs and the sample-batch encoding share: LEB128 varints and zigzag, which
// keeps small negative deltas small.
inline void putVarint(uint64_t value, std::vector<uint8_t> &out) {
  while (value >= 0x80) {
    out.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<uint8_t>(value));
}

// False when `in` ends inside the varint or the varint does not fit 64 bits.
inline bool getVarint(std::span<const uint8_t> &in, uint64_t &value) {
  value = 0;
  for (size_t i = 0; i < in.size() && i < 10; ++i) {
    const uint64_t bits = in[i] & 0x7f;
    if (i == 9 && bits > 1)
      return false;
    value |= bits << (7 * i);
    if ((in[i] & 0x80) == 0) {
      in = in.subspan(i + 1);
      return true;
    }
  }
  return false;
}

inline uint64_t zigzag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

inline int64_t unzigzag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

} // namespace strobe
