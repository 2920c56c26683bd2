// The byte primitives the trace file and the diff-record codec share: LEB128 varints (7 bits a
// byte, low group first) and zigzag, which keeps small negative deltas small.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
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

// The 7-bit groups of up to 8 LEB128 bytes, read as a little-endian word with the continuation
// bits cleared, joined into one number of up to 56 bits.
inline uint64_t joinVarintGroups(uint64_t x) {
  x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
  x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
  return (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
}

// Reads a varint of at most 8 bytes from the front of `in`, which has at least 8, without a
// branch per byte: the number of its bytes is data that no branch predicts well. False (and
// nothing read) for a longer one.
inline bool getShortVarint(std::span<const uint8_t> &in, uint64_t &value) {
  uint64_t word;
  std::memcpy(&word, in.data(), 8);
  const uint64_t ends = ~word & 0x8080808080808080ull;
  if (ends == 0)
    return false;
  const unsigned bits = static_cast<unsigned>(std::countr_zero(ends)) + 1; // 8 per byte
  value = joinVarintGroups(word & 0x7f7f7f7f7f7f7f7full & (~uint64_t{0} >> (64 - bits)));
  in = in.subspan(bits / 8);
  return true;
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
