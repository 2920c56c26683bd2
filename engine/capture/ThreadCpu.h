// How long a thread of a process on this host has run on a CPU, from /proc: what tells a sample
// taken on CPU from one taken while blocked, and how much a capture slowed the inferior down.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace strobe {

// Nanoseconds on CPU since the thread started, from the text of its /proc/PID/task/TID/schedstat;
// nullopt for an empty text, a thread that is gone.
std::optional<uint64_t> schedstatCpuNs(std::string_view schedstat);

// The same, read once; nullopt if /proc does not say (gone, not local).
std::optional<uint64_t> threadCpuNs(int pid, uint64_t tid);

} // namespace strobe
