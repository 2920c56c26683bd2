// The encoder's two scans over a record's slots, each with versions for the vector extensions of
// x86-64 beside a portable one; the encoder picks the ones the CPU runs once.
// - Which slots differ from the previous record's: asked of every register and extended slot at
//   every record (111 slots on x86-64; when there were 62, a third of the encoder's
//   instructions), eight slots per AVX-512 compare, four per AVX2, two per SSE2.
// - Which slot holds a memory value: asked of every value of a record with memory, and most
//   loaded values are in no slot (an operand of arithmetic), so the scan runs to the end: slot by
//   slot it had been a third of such a record's encoding.
#pragma once

#include "codec/DiffFormat.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace strobe {

// The slots in which a record differs from `previous` (its mainCount + extCount slots, main
// registers first): slot s < mainCount compares regs[s], slot mainCount + e compares ext[e].
// mainCount < 64, mainCount + extCount <= kMaxSlots. `extExpected`: the caller expects some
// extended slot to differ, which only makes the answer faster when it is right.
using ChangedSlotsFn = SlotMask (*)(const uint64_t *regs, const uint64_t *ext,
                                    const uint64_t *previous, unsigned mainCount, unsigned extCount,
                                    bool extExpected);

// Runs on every CPU: SSE2 on x86-64, plain comparisons elsewhere.
SlotMask changedSlotsPortable(const uint64_t *regs, const uint64_t *ext, const uint64_t *previous,
                              unsigned mainCount, unsigned extCount, bool extExpected);
#if defined(__x86_64__)
// Only on CPUs with AVX2.
SlotMask changedSlotsAvx2(const uint64_t *regs, const uint64_t *ext, const uint64_t *previous,
                          unsigned mainCount, unsigned extCount, bool extExpected);
// Only on CPUs with AVX-512F.
SlotMask changedSlotsAvx512(const uint64_t *regs, const uint64_t *ext, const uint64_t *previous,
                            unsigned mainCount, unsigned extCount, bool extExpected);
#endif

// The fastest version this CPU runs for records of mainCount + extCount slots. With AVX-512 the
// layouts of step traces have versions of their own, their counts built in: the recorded loops
// encode and decode 3-4 % faster with them than with the version for any count, which had fallen
// as far behind AVX2's.
ChangedSlotsFn changedSlotsForThisCpu(unsigned mainCount, unsigned extCount);

// How many slots a memory value of `bytes` (1..16) spans.
constexpr unsigned slotsSpanned(size_t bytes) { return static_cast<unsigned>((bytes + 7) / 8); }

// A value of 1..16 bytes as it would sit in one or two slots, little-endian: the bytes of slot r
// under lowMask equal low, and for a span of 2 those of slot r + 1 under highMask equal high.
// (Values are packed into and copied out of slot words with memcpy, which reads them as
// little-endian words only on a little-endian host: x86-64 and AArch64 Linux, where strobe runs.)
static_assert(std::endian::native == std::endian::little,
              "memory values need byte swaps on a big-endian host");
struct SlotValue {
  uint64_t low = 0, high = 0, lowMask = 0, highMask = 0;
  unsigned span = 1; // 1 or 2

  // For a value of 1..16 bytes.
  static SlotValue of(std::span<const uint8_t> bytes);
  // Whether slots `first` and `second` (ignored for a span of 1) hold the value.
  bool heldBy(uint64_t first, uint64_t second) const {
    return (first & lowMask) == low && (span == 1 || (second & highMask) == high);
  }
};

// The first slot r (r + value.span <= n) from which `slots` hold the value; n when there is none.
using FindValueFn = unsigned (*)(const uint64_t *slots, unsigned n, const SlotValue &value);

unsigned findValuePortable(const uint64_t *slots, unsigned n, const SlotValue &value);
#if defined(__x86_64__)
// Only on CPUs with AVX-512F.
unsigned findValueAvx512(const uint64_t *slots, unsigned n, const SlotValue &value);
#endif

// The fastest version this CPU runs.
FindValueFn findValueForThisCpu();

} // namespace strobe
