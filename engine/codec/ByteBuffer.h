// A growing byte buffer for the encoder's hot path: a record reserves room for its worst case
// once, writes through a plain pointer and commits what it used. (A std::vector grown per byte
// checks its capacity at every byte, and since a byte store may alias anything, the compiler
// reloads the vector's pointers after each one.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace strobe {

class ByteBuffer {
public:
  // Where the next bytes go, with room for `bytes` of them; valid until the next reserve().
  uint8_t *reserve(size_t bytes) {
    if (capacity_ - size_ < bytes) [[unlikely]]
      grow(size_ + bytes);
    return data_.get() + size_;
  }
  // Takes the bytes up to `end` (inside the last reservation) as written.
  void commit(const uint8_t *end) { size_ = static_cast<size_t>(end - data_.get()); }

  std::span<const uint8_t> bytes() const { return {data_.get(), size_}; }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }

private:
  // Keeps the bytes written, not the room beyond them: a std::vector zero-filled all of it at
  // every growth, about 50 of the 850 instructions a record of a stream of 2 400 samples took to
  // encode (each stream starts empty, and a thread's samples are few).
  void grow(size_t needed) {
    const size_t capacity = std::max({2 * capacity_, needed, kFirstCapacity});
    auto data = std::make_unique_for_overwrite<uint8_t[]>(capacity);
    std::copy_n(data_.get(), size_, data.get());
    data_ = std::move(data);
    capacity_ = capacity;
  }
  static constexpr size_t kFirstCapacity = 16 * 1024;

  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

} // namespace strobe
