// `strobe profile`: the tables of spec 002 (process/thread x space, module, function, line,
// instruction), each row with samples, share, estimated time and a 95 % interval.
#pragma once

#include "analysis/Profile.h"
#include "capture/Capture.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace strobe {

struct ProfileOptions {
  enum class By { Process, Thread, Module, Function, Line, Instruction } by = By::Function;
  bool callers = false;
  bool onCpuOnly = false; // --cpu; the default counts every sample (--wall)
  std::optional<uint64_t> tid;
  size_t top = 25; // rows shown; 0 shows all
  // A table, JSON, collapsed stacks (one line each, for flame graphs) or pprof's profile.proto
  // (gzipped, binary).
  enum class Format { Table, Json, Folded, Pprof } format = Format::Table;

  // Folded and pprof: every stack whole, so no --by, --callers or --top.
  bool wholeStacks() const { return format == Format::Folded || format == Format::Pprof; }
};

// Builds the profile from the capture's samples, then renders it. Folded stacks and pprof with
// nothing to show throw ReportError.
std::string renderProfile(const Capture &capture, const ProfileOptions &options);
// Renders a profile already reduced from `capture`'s samples (the live capture keeps one).
std::string renderProfile(const Capture &capture, const Profile &profile,
                          const ProfileOptions &options);

// How reports name a module or a source file: its last path component ("[vdso]" stays whole).
std::string shortName(const std::string &path);

// Three significant digits in the largest unit that keeps the value >= 1: "1.23 s", "45.6 ms".
std::string formatDuration(uint64_t ns);

} // namespace strobe
