// How long a thread of a process on this host has run on a CPU, from /proc: what tells a sample
// taken on CPU from one taken while blocked, and how much a capture slowed the inferior down.
#pragma once

#include <cstdint>
#include <optional>

namespace strobe {

// Nanoseconds on CPU since the thread started; nullopt if /proc does not say (gone, not local).
std::optional<uint64_t> threadCpuNs(int pid, uint64_t tid);

} // namespace strobe
