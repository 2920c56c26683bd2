// Which process on this host runs a debugger's inferior. The debugger's own pid is not always it:
// qemu-user's gdbstub runs the program inside the emulator's process and (before QEMU 8.2) calls
// it process 1, while its thread ids are the emulator's real host threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace strobe {

struct HostProcess {
  int pid = 0; // the process to signal and whose /proc entries describe the inferior's threads
  // The program runs under a user-mode emulator (qemu-user): the process's memory and registers
  // are the emulator's, not the program's, and real-time signals reach the program renumbered.
  bool emulated = false;
};

// `pid` and `tid` (any of the inferior's threads, 0 when none) as the debugger reports them, and
// the executable it debugs (empty when it has none). nullopt when no process on this host runs
// that program: a target on another machine, whose ids may exist here by chance.
std::optional<HostProcess> findHostProcess(int pid, uint64_t tid, const std::string &executable);

} // namespace strobe
