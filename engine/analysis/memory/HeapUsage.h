// One unit's heap usage (spec 003's table row, plus the gross and live figures), and the charges
// a replayed event makes to it.
#pragma once

#include "capture/AllocEvent.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace strobe {

// What one event changes for one unit.
struct Charge {
  int64_t delta = 0;             // to the signed running sum
  std::optional<CallClass> call; // the call, counted where it was made
  uint64_t allocatedBytes = 0;   // blocks this unit allocated
  uint64_t freedBytes = 0;       // bytes released and charged to this unit
  bool untracked = false;        // a release of a pointer no tracked call returned
  int64_t liveBlocksDelta = 0;   // live blocks and bytes are always the allocating unit's
  int64_t liveBytesDelta = 0;
};

struct HeapUsage {
  // The signed running sum: allocations add, frees subtract (charged per --frees); minimum and
  // maximum are the extremes it reached, both starting at 0.
  int64_t size = 0;
  int64_t minimum = 0;
  int64_t maximum = 0;
  uint64_t mallocCalls = 0;
  uint64_t reallocCalls = 0;
  uint64_t freeCalls = 0;
  uint64_t memalignCalls = 0;
  uint64_t allocatedBytes = 0;
  uint64_t freedBytes = 0;
  uint64_t untrackedFrees = 0;
  int64_t liveBlocks = 0;
  int64_t liveBytes = 0;
  int64_t peakLiveBytes = 0;

  void apply(const Charge &c) {
    size += c.delta;
    minimum = std::min(minimum, size);
    maximum = std::max(maximum, size);
    if (c.call) {
      switch (*c.call) {
      case CallClass::Malloc:
        ++mallocCalls;
        break;
      case CallClass::Realloc:
        ++reallocCalls;
        break;
      case CallClass::Free:
        ++freeCalls;
        break;
      case CallClass::Memalign:
        ++memalignCalls;
        break;
      }
    }
    allocatedBytes += c.allocatedBytes;
    freedBytes += c.freedBytes;
    untrackedFrees += c.untracked;
    liveBlocks += c.liveBlocksDelta;
    liveBytes += c.liveBytesDelta;
    peakLiveBytes = std::max(peakLiveBytes, liveBytes);
  }
};

} // namespace strobe
