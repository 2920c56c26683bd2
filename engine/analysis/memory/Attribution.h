// Which unit owns a heap event (spec 003): the library, the function or the thread its call stack
// names, under the first / last / all attribution modes.
#pragma once

#include "capture/AllocEvent.h"
#include "capture/Capture.h"

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace strobe {

enum class KeyBy { Library, Function, Thread };

enum class AttributionMode {
  First, // the first library called from main (or the thread's start routine)
  Last,  // the library that finally called the allocator
  All,   // every library on the path, each at most once per event
};

// Allocator wrappers skipped when choosing a key, so that an allocation made through them belongs
// to their caller. An entry is a function name ("strdup"; a demangled name also matches with its
// parameter list: "operator new" matches "operator new(unsigned long)") or MODULE!FUNCTION with the
// module's file name ("libpool.so!pool_alloc").
const std::vector<std::string> &defaultTransparentFunctions();

struct AttributionOptions {
  KeyBy by = KeyBy::Library;
  AttributionMode mode = AttributionMode::First;
  std::vector<std::string> transparent = defaultTransparentFunctions();
};

// One row's identity. Library: module. Function: module and function. Thread: tid.
struct MemoryKey {
  std::string module;   // full path; kUnknown when no module covers the frame
  std::string function; // empty for library keys; "0x..." (module offset) when unsymbolized
  uint64_t tid = 0;

  auto operator<=>(const MemoryKey &) const = default;
};

using KeyId = uint32_t;

class Attributor {
public:
  Attributor(const Capture &capture, AttributionOptions options);

  // The keys an event is charged to: one, or in All mode each library / function on the path.
  // Cached per stack (events from one call site share a stack).
  const std::vector<KeyId> &keysOf(const AllocEvent &event);
  const MemoryKey &key(KeyId id) const { return keys_[id]; }
  size_t keyCount() const { return keys_.size(); }

private:
  struct Frame {
    const ModuleInfo *module = nullptr;
    const SymbolInfo *symbol = nullptr;
    uint64_t pc = 0; // the address looked up: a return address minus one
  };

  std::vector<KeyId> attribute(const std::vector<uint64_t> &stack);
  Frame frame(const std::vector<uint64_t> &stack, size_t index) const;
  bool isExecutable(const Frame &f) const;
  bool isTransparent(const Frame &f) const;
  KeyId keyFor(const Frame &f);
  KeyId intern(MemoryKey key);

  const Capture &capture_;
  AttributionOptions options_;
  std::string executable_;
  std::vector<MemoryKey> keys_;
  std::map<MemoryKey, KeyId> ids_;
  std::map<std::vector<uint64_t>, std::vector<KeyId>> byStack_;
  std::map<uint64_t, std::vector<KeyId>> byThread_;
};

} // namespace strobe
