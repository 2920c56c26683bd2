// Bit-granular writing and reading, most significant bit first, as spec 001's patent-exact records
// are packed: back to back, no alignment, the last byte zero-padded.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace strobe {

class BitWriter {
public:
  // Appends the low `count` (0..64) bits of `value`, most significant first.
  void put(uint64_t value, unsigned count) {
    for (unsigned i = count; i-- > 0;) {
      if (bits_ % 8 == 0)
        bytes_.push_back(0);
      if ((value >> i) & 1)
        bytes_.back() |= static_cast<uint8_t>(0x80u >> (bits_ % 8));
      ++bits_;
    }
  }

  size_t bits() const { return bits_; }
  const std::vector<uint8_t> &bytes() const { return bytes_; }

private:
  std::vector<uint8_t> bytes_;
  size_t bits_ = 0;
};

class BitReader {
public:
  // Reads the first `bits` bits of `bytes` (at most all of them).
  BitReader(std::span<const uint8_t> bytes, size_t bits)
      : bytes_(bytes), bits_(std::min(bits, bytes.size() * 8)) {}

  size_t remaining() const { return bits_ - position_; }
  size_t position() const { return position_; }

  // The next `count` (0..64) bits as a number; false, consuming nothing, when fewer remain.
  bool get(unsigned count, uint64_t &value) {
    if (count > remaining())
      return false;
    value = 0;
    for (unsigned i = 0; i < count; ++i, ++position_)
      value = value << 1 | ((bytes_[position_ / 8] >> (7 - position_ % 8)) & 1);
    return true;
  }

private:
  std::span<const uint8_t> bytes_;
  size_t bits_;
  size_t position_ = 0;
};

} // namespace strobe
