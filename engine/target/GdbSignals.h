// The signal numbers of GDB's remote protocol (GDB's own enumeration, which qemu-user's gdbstub
// reports stops in), against the host's. GDB translates them itself; LLDB does not: connected to
// qemu it keeps the stub's numbers as if they were the host's, so its port translates.
#pragma once

#include <optional>

namespace strobe {

// The remote protocol's number for a host signal, if it has one (real-time signals have none
// that qemu keeps: it renumbers them by version).
std::optional<int> gdbSignalFromHost(int hostSigno);
// The host's number for a remote protocol signal, if the host has that signal.
std::optional<int> hostSignalFromGdb(int gdbSigno);

} // namespace strobe
