#include "analysis/memory/HeapLedger.h"

#include <algorithm>

namespace strobe {
namespace {

uint64_t pages(uint64_t length) {
  return (length + kMappingPage - 1) / kMappingPage * kMappingPage;
}

bool isMapping(AllocFunction f) {
  return f == AllocFunction::Mmap || f == AllocFunction::Munmap || f == AllocFunction::Mremap;
}

} // namespace

int64_t HeapEffect::delta() const {
  int64_t delta = static_cast<int64_t>(createdBytes);
  for (const Release &r : released)
    delta -= static_cast<int64_t>(r.bytes);
  return delta;
}

HeapEffect HeapLedger::apply(const AllocEvent &event, size_t index) {
  HeapEffect effect;
  effect.call = countedCall(event);
  if (!isMapping(event.function)) {
    if (event.releases())
      releaseBlock(event.previous, effect);
    if (event.creates()) {
      // A live block at the returned address was released by a path no hook saw; it is gone.
      if (blocks_.count(event.pointer))
        releaseBlock(event.pointer, effect);
      blocks_[event.pointer] = {event.size, index};
      liveBytes_ += event.size;
      effect.created = true;
      effect.createdBytes = event.size;
    }
  } else if (event.function == AllocFunction::Mmap) {
    if (event.creates())
      map(event.pointer, event.size, index, effect);
  } else if (event.function == AllocFunction::Munmap) {
    // Unmapping a range no tracked mmap created (a file mapping) is not a heap event.
    unmap(event.previous, event.previousSize, effect);
  } else {
    if (event.releases())
      unmap(event.previous, event.previousSize, effect);
    // Only a tracked (anonymous) mapping that moved or resized stays tracked.
    bool tracked = !effect.released.empty() || event.part == EventPart::ResultPart;
    if (event.creates() && tracked)
      map(event.pointer, event.size, index, effect);
  }
  peakLiveBytes_ = std::max(peakLiveBytes_, liveBytes_);
  return effect;
}

void HeapLedger::releaseBlock(uint64_t pointer, HeapEffect &effect) {
  auto it = blocks_.find(pointer);
  if (it == blocks_.end()) {
    effect.untracked = true;
    ++untracked_;
    return;
  }
  effect.released.push_back({it->second.size, it->second.event, true});
  liveBytes_ -= it->second.size;
  blocks_.erase(it);
}

void HeapLedger::unmap(uint64_t start, uint64_t length, HeapEffect &effect) {
  uint64_t end = start + pages(length);
  auto it = regions_.upper_bound(start);
  if (it != regions_.begin() && std::prev(it)->second.end > start)
    --it;
  while (it != regions_.end() && it->first < end) {
    uint64_t regionStart = it->first;
    MappedRegion region = it->second;
    uint64_t cutStart = std::max(regionStart, start);
    uint64_t cutEnd = std::min(region.end, end);
    it = regions_.erase(it);
    // What stays mapped on either side of the cut remains the same allocation's.
    if (regionStart < cutStart)
      regions_[regionStart] = {cutStart, region.event};
    if (cutEnd < region.end)
      regions_[cutEnd] = {region.end, region.event};
    bool whole = regionStart == cutStart && cutEnd == region.end;
    effect.released.push_back({cutEnd - cutStart, region.event, whole});
    liveBytes_ -= cutEnd - cutStart;
  }
}

void HeapLedger::map(uint64_t start, uint64_t length, size_t index, HeapEffect &effect) {
  // A fixed mapping over a live one replaces it, as the kernel does.
  unmap(start, length, effect);
  uint64_t bytes = pages(length);
  regions_[start] = {start + bytes, index};
  liveBytes_ += bytes;
  effect.created = true;
  effect.createdBytes = bytes;
}

} // namespace strobe
