#include "codec/SlotCompare.h"

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace strobe {
namespace {

// Splits the record into the words of a SlotMask. Ops::differing(a, b, n): bit i set when
// a[i] != b[i], n <= 64; Ops::same(a, b, n): whether all n are equal. The extended state rarely
// changes, so it is skipped with one equality test when it did not; where the caller expects it
// to have changed, that test would only read it twice. (Not always_inline: the
// AVX2 operations may only be inlined into a function compiled for AVX2, which the flattened
// callers below are.)
template <typename Ops>
inline SlotMask changedSlotsWith(const uint64_t *regs, const uint64_t *ext,
                                 const uint64_t *previous, unsigned mainCount, unsigned extCount,
                                 bool extExpected) {
  SlotMask changed;
  changed.words[0] = Ops::differing(regs, previous, mainCount);
  const uint64_t *previousExt = previous + mainCount;
  if (extCount == 0 || (!extExpected && Ops::same(ext, previousExt, extCount))) [[likely]]
    return changed;
  // Ext slot e is slot mainCount + e: the first 64 - mainCount fill word 0.
  const unsigned low = std::min(extCount, 64 - mainCount);
  changed.words[0] |= Ops::differing(ext, previousExt, low) << mainCount;
  changed.words[1] = Ops::differing(ext + low, previousExt + low, extCount - low);
  return changed;
}

// Branch-free: which slots change is data a branch predictor cannot learn.
inline uint64_t differingScalar(const uint64_t *a, const uint64_t *b, unsigned n) {
  uint64_t bits = 0;
  for (unsigned i = 0; i < n; ++i)
    bits |= uint64_t{a[i] != b[i]} << i;
  return bits;
}

struct PortableOps {
#if defined(__SSE2__)
  // Bit 0 and 1: whether a[0] == b[0] and a[1] == b[1]. (SSE2 has no 64-bit compare: both
  // 32-bit halves must match.)
  static unsigned pairEqual(const uint64_t *a, const uint64_t *b) {
    const __m128i eq32 = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(a)),
                                         _mm_loadu_si128(reinterpret_cast<const __m128i *>(b)));
    const __m128i eq64 = _mm_and_si128(eq32, _mm_shuffle_epi32(eq32, _MM_SHUFFLE(2, 3, 0, 1)));
    return static_cast<unsigned>(_mm_movemask_pd(_mm_castsi128_pd(eq64)));
  }
#endif

  static uint64_t differing(const uint64_t *a, const uint64_t *b, unsigned n) {
    uint64_t bits = 0;
    unsigned i = 0;
#if defined(__SSE2__)
    // One bit-gathering shift per eight slots instead of one per slot.
    for (; i + 8 <= n; i += 8) {
      const unsigned equal = pairEqual(a + i, b + i) | pairEqual(a + i + 2, b + i + 2) << 2 |
                             pairEqual(a + i + 4, b + i + 4) << 4 |
                             pairEqual(a + i + 6, b + i + 6) << 6;
      bits |= uint64_t{~equal & 0xffu} << i;
    }
    for (; i + 2 <= n; i += 2)
      bits |= uint64_t{~pairEqual(a + i, b + i) & 3u} << i;
#endif
    return i < n ? bits | differingScalar(a + i, b + i, n - i) << i : bits;
  }

  static bool same(const uint64_t *a, const uint64_t *b, unsigned n) {
    return std::memcmp(a, b, n * sizeof(uint64_t)) == 0;
  }
};

#if defined(__x86_64__)
// AVX2's: groups of eight slots (sixteen for equality), the last group ending at n: it overlaps the
// one before it when n is not a multiple, which changes no result and reads nothing past n. The
// groups before it are unrolled behind one jump on their count (the layout's, so always predicted):
// a loop over them had cost as many instructions again as the compares. Ops::differing8(a, b): bits
// 0-7 set where a[k] != b[k]; Ops::setXor16(diff, a, b): diff nonzero where any of 16 slots
// differ, Ops::addXor16 the same merged into diff; Ops::none(diff): all were equal. (Vectors go
// by reference: only functions compiled for the vector extension may pass them by value.)
template <typename Ops>
uint64_t differingInEights(const uint64_t *a, const uint64_t *b, unsigned n) {
  uint64_t bits = Ops::differing8(a + n - 8, b + n - 8) << (n - 8);
  switch ((n - 1) / 8) { // 8 <= n <= 64
  case 7:
    bits |= Ops::differing8(a + 48, b + 48) << 48;
    [[fallthrough]];
  case 6:
    bits |= Ops::differing8(a + 40, b + 40) << 40;
    [[fallthrough]];
  case 5:
    bits |= Ops::differing8(a + 32, b + 32) << 32;
    [[fallthrough]];
  case 4:
    bits |= Ops::differing8(a + 24, b + 24) << 24;
    [[fallthrough]];
  case 3:
    bits |= Ops::differing8(a + 16, b + 16) << 16;
    [[fallthrough]];
  case 2:
    bits |= Ops::differing8(a + 8, b + 8) << 8;
    [[fallthrough]];
  case 1:
    bits |= Ops::differing8(a, b);
  }
  return bits;
}

template <typename Ops> bool sameInSixteens(const uint64_t *a, const uint64_t *b, unsigned n) {
  typename Ops::Vector diff;
  Ops::setXor16(diff, a + n - 16, b + n - 16);
  switch ((n - 1) / 16) { // 16 <= n <= kMaxSlots = 128
  case 7:
    Ops::addXor16(diff, a + 96, b + 96);
    [[fallthrough]];
  case 6:
    Ops::addXor16(diff, a + 80, b + 80);
    [[fallthrough]];
  case 5:
    Ops::addXor16(diff, a + 64, b + 64);
    [[fallthrough]];
  case 4:
    Ops::addXor16(diff, a + 48, b + 48);
    [[fallthrough]];
  case 3:
    Ops::addXor16(diff, a + 32, b + 32);
    [[fallthrough]];
  case 2:
    Ops::addXor16(diff, a + 16, b + 16);
    [[fallthrough]];
  case 1:
    Ops::addXor16(diff, a, b);
  }
  return Ops::none(diff);
}

struct Avx2Ops {
  using Vector = __m256i;
  [[gnu::target("avx2")]] static __m256i load(const uint64_t *p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
  }
  // Bits 0-3: whether a[k] == b[k].
  [[gnu::target("avx2")]] static unsigned equal4(const uint64_t *a, const uint64_t *b) {
    const __m256i eq = _mm256_cmpeq_epi64(load(a), load(b));
    return static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(eq)));
  }
  // (Gathering the differences rather than the equalities leaves no bits past n to clear.)
  [[gnu::target("avx2")]] static uint64_t differing8(const uint64_t *a, const uint64_t *b) {
    return (equal4(a, b) | equal4(a + 4, b + 4) << 4) ^ 0xffu;
  }
  [[gnu::target("avx2")]] static __m256i xor4(const uint64_t *a, const uint64_t *b) {
    return _mm256_xor_si256(load(a), load(b));
  }
  [[gnu::target("avx2")]] static __m256i either(__m256i x, __m256i y) {
    return _mm256_or_si256(x, y);
  }
  [[gnu::target("avx2")]] static __m256i xor16(const uint64_t *a, const uint64_t *b) {
    return either(either(xor4(a, b), xor4(a + 4, b + 4)),
                  either(xor4(a + 8, b + 8), xor4(a + 12, b + 12)));
  }
  [[gnu::target("avx2")]] static void setXor16(Vector &diff, const uint64_t *a, const uint64_t *b) {
    diff = xor16(a, b);
  }
  [[gnu::target("avx2")]] static void addXor16(Vector &diff, const uint64_t *a, const uint64_t *b) {
    diff = either(diff, xor16(a, b));
  }
  [[gnu::target("avx2")]] static bool none(const Vector &diff) {
    return _mm256_testz_si256(diff, diff);
  }

  [[gnu::target("avx2")]] static uint64_t differing(const uint64_t *a, const uint64_t *b,
                                                    unsigned n) {
    if (n >= 8)
      return differingInEights<Avx2Ops>(a, b, n);
    if (n < 4)
      return differingScalar(a, b, n);
    return ~(equal4(a, b) | equal4(a + n - 4, b + n - 4) << (n - 4)) & ((1u << n) - 1);
  }

  [[gnu::target("avx2")]] static bool same(const uint64_t *a, const uint64_t *b, unsigned n) {
    if (n >= 16)
      return sameInSixteens<Avx2Ops>(a, b, n);
    if (n < 4)
      return differingScalar(a, b, n) == 0;
    __m256i diff = xor4(a + n - 4, b + n - 4);
    for (unsigned i = 0; i + 4 < n; i += 4)
      diff = either(diff, xor4(a + i, b + i));
    return none(diff);
  }
};

// The lowest `count` bits, count <= 8 or beyond (all eight).
constexpr __mmask8 liveBits(unsigned count) {
  return count >= 8 ? __mmask8{0xff} : static_cast<__mmask8>((1u << count) - 1);
}

// Eight slots per compare, which yields the bits of the differing slots as they are; a masked
// load takes a group shorter than eight without reading past n. Plain loops, which unroll
// completely where n is a constant (the layouts' versions below), leaving no jump on the counts:
// faster than the overlapping groups AVX2 uses (see changedSlotsForThisCpu).
struct Avx512Ops {
  using Vector = __m512i;
  [[gnu::target("avx512f")]] static __m512i load(const uint64_t *p) {
    return _mm512_loadu_si512(p);
  }
  [[gnu::target("avx512f")]] static uint64_t differing8(const uint64_t *a, const uint64_t *b) {
    return _mm512_cmpneq_epu64_mask(load(a), load(b));
  }
  [[gnu::target("avx512f")]] static __m512i either(__m512i x, __m512i y) {
    return _mm512_or_si512(x, y);
  }
  [[gnu::target("avx512f")]] static __m512i xor8(const uint64_t *a, const uint64_t *b) {
    return _mm512_xor_si512(load(a), load(b));
  }
  [[gnu::target("avx512f")]] static bool none(const Vector &diff) {
    return _mm512_test_epi64_mask(diff, diff) == 0;
  }

  // Whole groups of eight, then the rest under a mask.
  [[gnu::target("avx512f")]] static uint64_t differing(const uint64_t *a, const uint64_t *b,
                                                       unsigned n) {
    uint64_t bits = 0;
    unsigned i = 0;
#pragma GCC unroll 8
    for (; i + 8 <= n; i += 8)
      bits |= differing8(a + i, b + i) << i;
    if (i < n) {
      const __mmask8 live = liveBits(n - i);
      bits |= uint64_t{_mm512_mask_cmpneq_epu64_mask(live, _mm512_maskz_loadu_epi64(live, a + i),
                                                     _mm512_maskz_loadu_epi64(live, b + i))}
              << i;
    }
    return bits;
  }

  // a | (b ^ c) in one instruction.
  [[gnu::target("avx512f")]] static __m512i orXor(__m512i a, __m512i b, __m512i c) {
    return _mm512_ternarylogic_epi64(a, b, c, 0xf6);
  }
  // Two accumulators of differences, so that the ORs of one group need not wait for the other's;
  // the last group ends at n, overlapping the one before it.
  [[gnu::target("avx512f")]] static bool same(const uint64_t *a, const uint64_t *b, unsigned n) {
    if (n < 16)
      return n < 8 ? differing(a, b, n) == 0 : none(either(xor8(a, b), xor8(a + n - 8, b + n - 8)));
    __m512i even = xor8(a, b), odd = xor8(a + 8, b + 8);
    unsigned i = 16;
#pragma GCC unroll 8
    for (; i + 16 <= n; i += 16) {
      even = orXor(even, load(a + i), load(b + i));
      odd = orXor(odd, load(a + i + 8), load(b + i + 8));
    }
    if (i + 8 < n)
      even = orXor(even, load(a + i), load(b + i));
    if (i < n)
      odd = orXor(odd, load(a + n - 8), load(b + n - 8));
    return none(either(even, odd));
  }
};
#endif

} // namespace

[[gnu::flatten]] SlotMask changedSlotsPortable(const uint64_t *regs, const uint64_t *ext,
                                               const uint64_t *previous, unsigned mainCount,
                                               unsigned extCount, bool extExpected) {
  return changedSlotsWith<PortableOps>(regs, ext, previous, mainCount, extCount, extExpected);
}

#if defined(__x86_64__)
[[gnu::target("avx2"), gnu::flatten]] SlotMask
changedSlotsAvx2(const uint64_t *regs, const uint64_t *ext, const uint64_t *previous,
                 unsigned mainCount, unsigned extCount, bool extExpected) {
  return changedSlotsWith<Avx2Ops>(regs, ext, previous, mainCount, extCount, extExpected);
}

[[gnu::target("avx512f"), gnu::flatten]] SlotMask
changedSlotsAvx512(const uint64_t *regs, const uint64_t *ext, const uint64_t *previous,
                   unsigned mainCount, unsigned extCount, bool extExpected) {
  return changedSlotsWith<Avx512Ops>(regs, ext, previous, mainCount, extCount, extExpected);
}

namespace {

// changedSlotsAvx512 for one layout, its counts built in (the ones passed are ignored): its loops
// unroll, with no jumps on the counts.
template <unsigned Main, unsigned Ext>
[[gnu::target("avx512f"), gnu::flatten]] SlotMask
changedSlotsAvx512For(const uint64_t *regs, const uint64_t *ext, const uint64_t *previous, unsigned,
                      unsigned, bool extExpected) {
  return changedSlotsWith<Avx512Ops>(regs, ext, previous, Main, Ext, extExpected);
}

struct LayoutVersion {
  unsigned mainCount, extCount;
  ChangedSlotsFn changedSlots;
};

// The layouts of step traces (layoutFor): x86-64 and AArch64, with their extended state or not.
constexpr LayoutVersion kAvx512Layouts[] = {
    {21, 90, changedSlotsAvx512For<21, 90>},
    {21, 0, changedSlotsAvx512For<21, 0>},
    {34, 67, changedSlotsAvx512For<34, 67>},
    {34, 0, changedSlotsAvx512For<34, 0>},
};

} // namespace
#endif

SlotValue SlotValue::of(std::span<const uint8_t> bytes) {
  SlotValue v;
  const size_t n = bytes.size();
  v.span = slotsSpanned(n);
  if (v.span == 2) {
    std::memcpy(&v.low, bytes.data(), 8);
    v.lowMask = ~uint64_t{0};
    std::memcpy(&v.high, bytes.data() + 8, n - 8);
    v.highMask = n == 16 ? ~uint64_t{0} : (uint64_t{1} << (8 * (n - 8))) - 1;
  } else {
    std::memcpy(&v.low, bytes.data(), n);
    v.lowMask = n == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
  }
  return v;
}

unsigned findValuePortable(const uint64_t *slots, unsigned n, const SlotValue &value) {
  // One loop per span, each with its span a constant: a loop testing the span at every slot was
  // slower.
  auto search = [&](auto span) {
    unsigned r = 0;
    for (; r + span <= n; ++r)
      if (value.heldBy(slots[r], span == 2 ? slots[r + 1] : 0))
        return r;
    return n;
  };
  return value.span == 1 ? search(std::integral_constant<unsigned, 1>{})
                         : search(std::integral_constant<unsigned, 2>{});
}

#if defined(__x86_64__)
namespace {

// Bit k set where the value starts at slot r + k, of the starts in `live`.
[[gnu::target("avx512f"), gnu::always_inline]] inline __mmask8
startsIn8(const uint64_t *slots, unsigned r, __mmask8 live, const __m512i &low,
          const __m512i &lowMask, const __m512i &high, const __m512i &highMask, unsigned span) {
  __mmask8 hit = _mm512_mask_cmpeq_epu64_mask(
      live, _mm512_and_si512(_mm512_maskz_loadu_epi64(live, slots + r), lowMask), low);
  if (span == 2)
    hit = _mm512_mask_cmpeq_epu64_mask(
        hit, _mm512_and_si512(_mm512_maskz_loadu_epi64(live, slots + r + 1), highMask), high);
  return hit;
}

} // namespace

// Sixteen starting slots per step (most values are in no slot, so the search runs to the end:
// one branch per sixteen was faster than one per eight); masked loads keep the last step within
// the n slots.
[[gnu::target("avx512f")]] unsigned findValueAvx512(const uint64_t *slots, unsigned n,
                                                    const SlotValue &value) {
  if (n < value.span)
    return n;
  const unsigned starts = n - value.span + 1;
  const __m512i low = _mm512_set1_epi64(static_cast<long long>(value.low));
  const __m512i lowMask = _mm512_set1_epi64(static_cast<long long>(value.lowMask));
  const __m512i high = _mm512_set1_epi64(static_cast<long long>(value.high));
  const __m512i highMask = _mm512_set1_epi64(static_cast<long long>(value.highMask));
  for (unsigned r = 0; r < starts; r += 16) {
    const unsigned left = starts - r;
    const unsigned hit =
        startsIn8(slots, r, liveBits(left), low, lowMask, high, highMask, value.span) |
        unsigned{startsIn8(slots, r + 8, liveBits(left > 8 ? left - 8 : 0), low, lowMask, high,
                           highMask, value.span)}
            << 8;
    if (hit)
      return r + static_cast<unsigned>(std::countr_zero(hit));
  }
  return n;
}
#endif

FindValueFn findValueForThisCpu() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f"))
    return findValueAvx512;
#endif
  return findValuePortable;
}

ChangedSlotsFn changedSlotsForThisCpu(unsigned mainCount, unsigned extCount) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    for (const LayoutVersion &v : kAvx512Layouts)
      if (v.mainCount == mainCount && v.extCount == extCount)
        return v.changedSlots;
    return changedSlotsAvx512;
  }
  if (__builtin_cpu_supports("avx2"))
    return changedSlotsAvx2;
#endif
  return changedSlotsPortable;
}

} // namespace strobe
