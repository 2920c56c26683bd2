// One heap (or anonymous mapping) event of spec 003, as the allocation tracker records it and the
// trace file stores it. Events are kept in the order their effects happened in the inferior:
// a release at the call's entry, an allocation at its return.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace strobe {

// The hooked function an event comes from (the outermost one when tracked calls nest).
enum class AllocFunction : uint8_t {
  Malloc,
  Calloc,
  Realloc,
  ReallocArray,
  Free,
  Memalign,
  PosixMemalign,
  AlignedAlloc,
  Valloc,
  Pvalloc,
  New,             // operator new (plain and nothrow)
  NewArray,        // operator new[]
  NewAligned,      // operator new (std::align_val_t)
  NewArrayAligned, // operator new[] (std::align_val_t)
  Delete,          // every operator delete variant
  DeleteArray,     // every operator delete[] variant
  Mmap,            // anonymous mappings only
  Munmap,
  Mremap,
};

// Indexed by AllocFunction.
inline constexpr std::string_view kAllocFunctionNames[] = {"malloc",
                                                           "calloc",
                                                           "realloc",
                                                           "reallocarray",
                                                           "free",
                                                           "memalign",
                                                           "posix_memalign",
                                                           "aligned_alloc",
                                                           "valloc",
                                                           "pvalloc",
                                                           "operator new",
                                                           "operator new[]",
                                                           "aligned operator new",
                                                           "aligned operator new[]",
                                                           "operator delete",
                                                           "operator delete[]",
                                                           "mmap",
                                                           "munmap",
                                                           "mremap"};

inline std::string_view allocFunctionName(AllocFunction f) {
  return kAllocFunctionNames[static_cast<size_t>(f)];
}

// The table column of spec 003 that counts a call.
enum class CallClass : uint8_t { Malloc, Realloc, Free, Memalign };

// A realloc or mremap is normally one event. When another thread received (part of) its old block
// before it returned, the old block was certainly released by then: the tracker stores the release
// at that moment (ReleasePart) and the new block at the return (ResultPart), so that a replay never
// sees one block owned twice.
enum class EventPart : uint8_t { Whole, ReleasePart, ResultPart };

struct AllocEvent {
  uint64_t timeNs = 0; // since the capture started
  uint64_t tid = 0;
  AllocFunction function = AllocFunction::Malloc;
  EventPart part = EventPart::Whole;
  // What the call created: the returned block (0: none), and the bytes asked for (calloc n x size;
  // mmap / mremap: the mapping's length).
  uint64_t pointer = 0;
  uint64_t size = 0;
  // What the call released: free / delete's argument, realloc's old block, munmap's range
  // (previousSize is its length; mremap: the old length; heap blocks: 0, the size is known from
  // the allocation). free(NULL) is an event with previous = 0.
  uint64_t previous = 0;
  uint64_t previousSize = 0;
  std::vector<uint64_t> stack; // at the call's entry: stack[0] = the hooked function, then callers

  bool releases() const { return previous != 0; }
  bool creates() const { return pointer != 0; }
};

inline CallClass callClass(AllocFunction f) {
  switch (f) {
  case AllocFunction::Malloc:
  case AllocFunction::Calloc:
  case AllocFunction::New:
  case AllocFunction::NewArray:
  case AllocFunction::Mmap:
    return CallClass::Malloc;
  case AllocFunction::Realloc:
  case AllocFunction::ReallocArray:
  case AllocFunction::Mremap:
    return CallClass::Realloc;
  case AllocFunction::Free:
  case AllocFunction::Delete:
  case AllocFunction::DeleteArray:
  case AllocFunction::Munmap:
    return CallClass::Free;
  case AllocFunction::Memalign:
  case AllocFunction::PosixMemalign:
  case AllocFunction::AlignedAlloc:
  case AllocFunction::Valloc:
  case AllocFunction::Pvalloc:
  case AllocFunction::NewAligned:
  case AllocFunction::NewArrayAligned:
    return CallClass::Memalign;
  }
  return CallClass::Malloc;
}

// The column that counts the call an event records; none for the result half of a split call.
// realloc(p, 0) that released p and returned NULL is a free (spec 003, T5).
inline std::optional<CallClass> countedCall(const AllocEvent &e) {
  if (e.part == EventPart::ResultPart)
    return std::nullopt;
  if (e.part == EventPart::Whole && callClass(e.function) == CallClass::Realloc && !e.creates())
    return CallClass::Free;
  return callClass(e.function);
}

} // namespace strobe
