// The byte primitives the trace file and the diff-record codec share: LEB128 varints (7 bits a
// byte, low group first) and zigzag, which keeps small negative deltas small.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strobe {

inline void putVarint(uint64_t value, std::vector<uint8_t> &out) {
  while (value >= 0x80) {
    out.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<uint8_t>(value));
}

// Writes `value` at `out`, which has room for 10 bytes; returns the end of what it wrote. For
// the codec's hot paths, which reserve room once per record instead of growing a vector per byte.
inline uint8_t *writeVarint(uint64_t value, uint8_t *out) {
  while (value >= 0x80) {
    *out++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<uint8_t>(value);
  return out;
}

// getVarint beyond its one-byte case.
inline bool getLongVarint(std::span<const uint8_t> &in, uint64_t &value) {
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

// False when `in` ends inside the varint or the varint does not fit 64 bits.
inline bool getVarint(std::span<const uint8_t> &in, uint64_t &value) {
  if (!in.empty() && in[0] < 0x80) [[likely]] {
    value = in[0];
    in = in.subspan(1);
    return true;
  }
  return getLongVarint(in, value);
}

inline uint64_t zigzag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

inline int64_t unzigzag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

} // namespace strobe
