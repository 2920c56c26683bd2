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

// findHostProcess for a port, which is asked several times a command (pid, isHostProcess,
// isEmulated): the answer, read from /proc, is kept until the debugger's ids or executable change.
class HostProcessLookup {
public:
  const std::optional<HostProcess> &find(int pid, uint64_t tid, const std::string &executable);
  // The pid to signal, as of the last find(): the host process's, or the debugger's own when no
  // process on this host runs the program.
  int pid() const { return host_ ? host_->pid : pid_; }

private:
  int pid_ = 0; // what host_ was found from
  uint64_t tid_ = 0;
  std::string executable_;
  std::optional<HostProcess> host_;
};

} // namespace strobe
