// `strobe mem table | leaks | status`: spec 003's heap tables rendered as text or JSON.
#pragma once

#include "analysis/memory/MemoryAnalysis.h"
#include "capture/AllocTracker.h"
#include "capture/Capture.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strobe {

// A table column, as --sort names it: key size min max malloc realloc free memalign allocated
// freed blocks live peak untracked.
enum class MemoryColumn {
  Key,
  Size,
  Minimum,
  Maximum,
  Malloc,
  Realloc,
  Free,
  Memalign,
  Allocated,
  Freed,
  Blocks,
  Live,
  Peak,
  Untracked,
};

std::optional<MemoryColumn> memoryColumnFromName(std::string_view name);

struct MemoryTableOptions {
  MemoryAnalysisOptions analysis;
  bool perInvocation = false;
  std::optional<uint64_t> intervalNs;
  MemoryColumn sort = MemoryColumn::Size; // descending; Key sorts by name
  size_t top = 25;                        // rows shown (per interval); 0 shows all
  bool json = false;
};

struct LeakOptions {
  MemoryAnalysisOptions analysis; // the key each stack is labelled with
  size_t top = 10;                // stacks shown; 0 shows all
  bool json = false;
};

std::string renderMemoryTable(const Capture &capture, const MemoryTableOptions &options);
std::string renderLeaks(const Capture &capture, const LeakOptions &options);
// Hooks planted, functions not found, events, traps, live blocks: `strobe mem status`.
std::string renderMemoryStatus(const AllocTracker &tracker);

// Signed bytes with a binary unit and three significant digits: "512 B", "-1.50 KiB", "2.00 MiB".
std::string formatBytes(int64_t bytes);

} // namespace strobe
