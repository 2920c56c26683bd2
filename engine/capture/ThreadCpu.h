// How long a thread of a process on this host has run on a CPU, from /proc: what tells a sample
// taken on CPU from one taken while blocked, and how much a capture slowed the inferior down.
#pragma once

#include "capture/ProcFile.h"

#include <cstdint>
#include <optional>

namespace strobe {

// One thread's CPU time, read as often as needed through one open /proc file.
class ThreadCpuClock {
public:
  ThreadCpuClock(int pid, uint64_t tid);
  // Nanoseconds on CPU since the thread started; nullopt if /proc does not say (gone, not local).
  std::optional<uint64_t> read();

private:
  ProcFile schedstat_;
};

// The same, read once.
std::optional<uint64_t> threadCpuNs(int pid, uint64_t tid);

} // namespace strobe
