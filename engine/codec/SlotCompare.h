// Which of a record's slots differ from the previous record's. The encoder asks this of every
// register and extended slot at every record (111 slots on x86-64; when there were 62, a third
// of its instructions), so there are versions for AVX-512 (eight slots per compare) and AVX2 (four)
// beside the portable one (two per SSE2 compare), and the encoder picks the one the CPU runs once.
#pragma once

#include "codec/DiffFormat.h"

#include <cstdint>

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

// The fastest version this CPU runs.
ChangedSlotsFn changedSlotsForThisCpu();

} // namespace strobe
