#include "codec/SlotCompare.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace strobe;

namespace {

SlotMask expectedChanges(const std::vector<uint64_t> &regs, const std::vector<uint64_t> &ext,
                         const std::vector<uint64_t> &previous) {
  SlotMask mask;
  for (unsigned s = 0; s < regs.size(); ++s)
    if (regs[s] != previous[s])
      mask.set(s);
  for (unsigned e = 0; e < ext.size(); ++e)
    if (ext[e] != previous[regs.size() + e])
      mask.set(static_cast<unsigned>(regs.size()) + e);
  return mask;
}

// One version against slot-by-slot comparison on one layout: slots that differ rarely, often, in
// one half of a 64-bit value only, or (`oneByOne`) one at a time.
void checkLayout(ChangedSlotsFn changedSlots, unsigned mainCount, unsigned extCount,
                 bool extExpected, bool oneByOne, std::mt19937_64 &random) {
  // Exact sizes, so a read past either array is a sanitizer error.
  std::vector<uint64_t> previous(mainCount + extCount), regs(mainCount), ext(extCount);
  for (uint64_t &v : previous)
    v = random();
  for (const unsigned percent : {0u, 3u, 50u}) {
    for (unsigned s = 0; s < mainCount + extCount; ++s) {
      uint64_t v = previous[s];
      if (random() % 100 < percent)
        v ^= random() % 2 ? uint64_t{1} << (random() % 64) : random() | 1;
      (s < mainCount ? regs[s] : ext[s - mainCount]) = v;
    }
    ASSERT_EQ(
        changedSlots(regs.data(), ext.data(), previous.data(), mainCount, extCount, extExpected),
        expectedChanges(regs, ext, previous))
        << mainCount << " main, " << extCount << " ext, " << percent << "% changed"
        << (extExpected ? ", ext expected to change" : "");
  }
  if (!oneByOne)
    return;
  for (unsigned s = 0; s < mainCount + extCount; ++s) {
    std::copy(previous.begin(), previous.begin() + mainCount, regs.begin());
    std::copy(previous.begin() + mainCount, previous.end(), ext.begin());
    (s < mainCount ? regs[s] : ext[s - mainCount]) ^= uint64_t{1} << 63;
    SlotMask one;
    one.set(s);
    ASSERT_EQ(
        changedSlots(regs.data(), ext.data(), previous.data(), mainCount, extCount, extExpected),
        one)
        << mainCount << " main, " << extCount << " ext, slot " << s
        << (extExpected ? ", ext expected to change" : "");
  }
}

// One version on every layout the format allows, with extended slots expected to change or not,
// rightly or wrongly.
void checkAgainstScalar(ChangedSlotsFn changedSlots) {
  std::mt19937_64 random(42);
  for (const bool extExpected : {false, true})
    for (unsigned mainCount = 1; mainCount < 64; ++mainCount)
      for (unsigned extCount = 0; mainCount + extCount <= kMaxSlots; ++extCount)
        checkLayout(changedSlots, mainCount, extCount, extExpected,
                    extCount % 7 == 0 || mainCount % 7 == 0, random);
}

// The layouts of step traces: x86-64 and AArch64, with their extended state and without.
std::vector<StreamLayout> traceLayouts() {
  std::vector<StreamLayout> layouts;
  for (const Isa isa : {Isa::X86_64, Isa::AArch64})
    for (const bool withExt : {true, false})
      layouts.push_back(layoutFor(isa, withExt));
  return layouts;
}

} // namespace

TEST(SlotCompare, PortableMatchesScalar) { checkAgainstScalar(changedSlotsPortable); }

#if defined(__x86_64__)
TEST(SlotCompare, Avx2MatchesScalar) {
  if (!__builtin_cpu_supports("avx2"))
    GTEST_SKIP() << "this CPU has no AVX2";
  checkAgainstScalar(changedSlotsAvx2);
}

TEST(SlotCompare, Avx512MatchesScalar) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "this CPU has no AVX-512F";
  checkAgainstScalar(changedSlotsAvx512);
}
#endif

TEST(SlotCompare, ChoosesAVersionThisCpuRuns) {
  const ChangedSlotsFn chosen = changedSlotsForThisCpu(5, 7);
#if defined(__x86_64__)
  EXPECT_EQ(chosen, __builtin_cpu_supports("avx512f") ? changedSlotsAvx512
                    : __builtin_cpu_supports("avx2")  ? changedSlotsAvx2
                                                      : changedSlotsPortable);
#else
  EXPECT_EQ(chosen, changedSlotsPortable);
#endif
}

// Each trace layout's version: its own where the CPU has AVX-512 (were a register table to change
// its counts, the layout would fall back to the version for any count), and exact.
TEST(SlotCompare, TraceLayoutsVersionsMatchScalar) {
  std::mt19937_64 random(7);
  for (const StreamLayout &layout : traceLayouts()) {
    const ChangedSlotsFn chosen = changedSlotsForThisCpu(layout.mainCount, layout.extSlots);
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) {
      EXPECT_NE(chosen, changedSlotsAvx512) << layout.mainCount << " main, " << layout.extSlots;
    }
#endif
    for (const bool extExpected : {false, true})
      for (int round = 0; round < 20; ++round)
        checkLayout(chosen, layout.mainCount, layout.extSlots, extExpected, round == 0, random);
  }
}

namespace {

// The first slot holding the value, read byte by byte from the slots as little-endian memory.
unsigned firstHolding(const std::vector<uint64_t> &slots, const std::vector<uint8_t> &value) {
  const size_t span = (value.size() + 7) / 8;
  for (size_t r = 0; r + span <= slots.size(); ++r) {
    bool all = true;
    for (size_t k = 0; k < value.size(); ++k)
      all = all && static_cast<uint8_t>(slots[r + k / 8] >> (8 * (k % 8))) == value[k];
    if (all)
      return static_cast<unsigned>(r);
  }
  return static_cast<unsigned>(slots.size());
}

// One version against the byte-by-byte search: every slot count, every value size (a value
// shorter than a slot must match whatever the slot's other bytes hold), values that sit at the
// first, a middle, the last possible or no slot, and near misses (all but the last byte match).
void checkFindValue(FindValueFn findValue) {
  std::mt19937_64 random(7);
  for (unsigned n = 0; n <= kMaxSlots; ++n) {
    std::vector<uint64_t> slots(n); // exact size, so a read past it is a sanitizer error
    for (uint64_t &v : slots)
      v = random();
    for (unsigned size = 1; size <= 16; ++size) {
      const unsigned span = (size + 7) / 8;
      std::vector<unsigned> places = {0, n / 2, n - std::min(n, span), n};
      for (const unsigned at : places) {
        std::vector<uint8_t> value(size);
        for (unsigned k = 0; k < size; ++k)
          value[k] = at + span <= n ? static_cast<uint8_t>(slots[at + k / 8] >> (8 * (k % 8)))
                                    : static_cast<uint8_t>(random());
        for (const int nearMiss : {0, 1}) {
          std::vector<uint8_t> probe = value;
          if (nearMiss)
            probe.back() ^= 0x80;
          ASSERT_EQ(findValue(slots.data(), n, SlotValue::of(probe)), firstHolding(slots, probe))
              << n << " slots, " << size << " bytes at " << at << (nearMiss ? ", near miss" : "");
        }
      }
    }
  }
}

} // namespace

TEST(SlotCompare, PortableFindsValuesLikeBytewiseSearch) { checkFindValue(findValuePortable); }

#if defined(__x86_64__)
TEST(SlotCompare, Avx512FindsValuesLikeBytewiseSearch) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "this CPU has no AVX-512F";
  checkFindValue(findValueAvx512);
}
#endif

TEST(SlotCompare, ChoosesAValueSearchThisCpuRuns) {
#if defined(__x86_64__)
  EXPECT_EQ(findValueForThisCpu(),
            __builtin_cpu_supports("avx512f") ? findValueAvx512 : findValuePortable);
#else
  EXPECT_EQ(findValueForThisCpu(), findValuePortable);
#endif
}
