// Which of a record's slots differ from the previous record's: the encoder asks this of every
// register and extended slot at every record, so it compares two slots per SSE2 instruction where
// it can (one bit-gathering shift per eight slots instead of one per slot).
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strobe {

#if defined(__SSE2__)
namespace detail {

// Bit 0 and 1: whether a[0] == b[0] and a[1] == b[1]. (SSE2 has no 64-bit compare: both 32-bit
// halves must match.)
[[gnu::always_inline]] inline unsigned pairEqual(const uint64_t *a, const uint64_t *b) {
  const __m128i eq32 = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(a)),
                                       _mm_loadu_si128(reinterpret_cast<const __m128i *>(b)));
  const __m128i eq64 = _mm_and_si128(eq32, _mm_shuffle_epi32(eq32, _MM_SHUFFLE(2, 3, 0, 1)));
  return static_cast<unsigned>(_mm_movemask_pd(_mm_castsi128_pd(eq64)));
}

} // namespace detail
#endif

// Bit i set when a[i] != b[i], for i < n <= 64.
[[gnu::always_inline]] inline uint64_t differingSlots(const uint64_t *a, const uint64_t *b,
                                                      unsigned n) {
  uint64_t bits = 0;
  unsigned i = 0;
#if defined(__SSE2__)
  using detail::pairEqual;
  for (; i + 8 <= n; i += 8) {
    const unsigned equal = pairEqual(a + i, b + i) | pairEqual(a + i + 2, b + i + 2) << 2 |
                           pairEqual(a + i + 4, b + i + 4) << 4 |
                           pairEqual(a + i + 6, b + i + 6) << 6;
    bits |= uint64_t{~equal & 0xffu} << i;
  }
  for (; i + 2 <= n; i += 2)
    bits |= uint64_t{~pairEqual(a + i, b + i) & 3u} << i;
#endif
  for (; i < n; ++i)
    bits |= uint64_t{a[i] != b[i]} << i;
  return bits;
}

} // namespace strobe
