// The live state of the inferior's heap, rebuilt by replaying allocation events: which blocks and
// anonymous mappings are live, who allocated each, and what every event released. The tracker
// keeps one while it runs (status, leaks); reports replay the capture's events through another.
#pragma once

#include "capture/AllocEvent.h"

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

namespace strobe {

// Mappings are accounted in whole pages, as the kernel maps them.
inline constexpr uint64_t kMappingPage = 4096;

struct LiveBlock {
  uint64_t size = 0;
  size_t event = 0; // index of the event that allocated it
};

struct MappedRegion {
  uint64_t end = 0; // one past the last byte
  size_t event = 0;
};

// What one event did.
struct HeapEffect {
  struct Release {
    uint64_t bytes = 0;
    size_t ownerEvent = 0; // the event that allocated what was released
    bool whole = true;     // false: only part of a mapping was unmapped; the rest stays live
  };
  std::optional<CallClass> call;
  uint64_t createdBytes = 0;
  bool created = false;
  std::vector<Release> released;
  // A free or realloc of a pointer no tracked call returned (allocated before tracking began, or
  // by a function that is not hooked): counted, and changes nothing.
  bool untracked = false;

  int64_t delta() const;
};

class HeapLedger {
public:
  // Applies the event at `index` of the capture's event list.
  HeapEffect apply(const AllocEvent &event, size_t index);

  const std::unordered_map<uint64_t, LiveBlock> &blocks() const { return blocks_; }
  const std::map<uint64_t, MappedRegion> &regions() const { return regions_; } // by start

  uint64_t liveBlocks() const { return blocks_.size() + regions_.size(); }
  uint64_t liveBytes() const { return liveBytes_; }
  uint64_t peakLiveBytes() const { return peakLiveBytes_; }
  uint64_t untrackedReleases() const { return untracked_; }

private:
  void releaseBlock(uint64_t pointer, HeapEffect &effect);
  void unmap(uint64_t start, uint64_t length, HeapEffect &effect);
  void map(uint64_t start, uint64_t length, size_t index, HeapEffect &effect);

  std::unordered_map<uint64_t, LiveBlock> blocks_;
  std::map<uint64_t, MappedRegion> regions_;
  uint64_t liveBytes_ = 0;
  uint64_t peakLiveBytes_ = 0;
  uint64_t untracked_ = 0;
};

} // namespace strobe
