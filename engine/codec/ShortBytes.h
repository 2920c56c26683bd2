// Copies and compares of at most 16 bytes, such as an instruction's: the codec does one per record
// and the instruction cache one per memory access, and a loop per byte (or a memcmp/memmove call)
// cost more than the two or three fixed-size moves these compile to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace strobe {

// Calls op(width, offset) on chunks of 8, 4 or 1 bytes that together cover [0, n), n <= 16,
// overlapping rather than reaching past n, while op returns true; whether all did.
template <typename Op> [[gnu::always_inline]] inline bool shortChunks(size_t n, Op op) {
  using Eight = std::integral_constant<size_t, 8>;
  using Four = std::integral_constant<size_t, 4>;
  using One = std::integral_constant<size_t, 1>;
  if (n >= 8)
    return op(Eight{}, 0) && op(Eight{}, n - 8);
  if (n >= 4)
    return op(Four{}, 0) && op(Four{}, n - 4);
  return n == 0 || (op(One{}, 0) && op(One{}, n / 2) && op(One{}, n - 1));
}

// Copies n <= 16 bytes.
[[gnu::always_inline]] inline void copyShort(uint8_t *to, const uint8_t *from, size_t n) {
  shortChunks(n, [&](auto width, size_t at) {
    std::memcpy(to + at, from + at, width);
    return true;
  });
}

// Whether the first n <= 16 bytes at a and b are equal.
[[gnu::always_inline]] inline bool sameShort(const uint8_t *a, const uint8_t *b, size_t n) {
  return shortChunks(
      n, [&](auto width, size_t at) { return std::memcmp(a + at, b + at, width) == 0; });
}

} // namespace strobe
