// A growing byte buffer for the encoder's hot path: a record reserves room for its worst case
// once, writes through a plain pointer and commits what it used. (A std::vector grown per byte
// checks its capacity at every byte, and since a byte store may alias anything, the compiler
// reloads the vector's pointers after each one.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace strobe {

class ByteBuffer {
public:
  // Where the next bytes go, with room for `bytes` of them; valid until the next reserve().
  uint8_t *reserve(size_t bytes) {
    if (storage_.size() - size_ < bytes) [[unlikely]]
      storage_.resize(std::max(2 * storage_.size(), size_ + bytes));
    return storage_.data() + size_;
  }
  // Takes the bytes up to `end` (inside the last reservation) as written.
  void commit(const uint8_t *end) { size_ = static_cast<size_t>(end - storage_.data()); }

  std::span<const uint8_t> bytes() const { return {storage_.data(), size_}; }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }

private:
  std::vector<uint8_t> storage_; // its size is the capacity: grown, never zero-filled per record
  size_t size_ = 0;
};

} // namespace strobe
