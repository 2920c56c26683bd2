#include "target/HostProcess.h"

#include <fmt/format.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace strobe {
namespace {

bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// The process a host thread belongs to (/proc lists only processes, but opens any thread id).
int threadGroup(uint64_t tid) {
  std::ifstream in(fmt::format("/proc/{}/status", tid));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Tgid:", 0) == 0)
      return std::stoi(line.substr(5));
  return 0;
}

// qemu-user (qemu-aarch64, qemu-x86_64-static, ...), started directly or by binfmt_misc, running
// `executable`: one of its arguments names that file, relative to the emulator's directory.
bool emulatorRunning(int pid, const std::string &executable) {
  std::string proc = fmt::format("/proc/{}", pid);
  char link[4096] = {};
  if (::readlink((proc + "/exe").c_str(), link, sizeof link - 1) <= 0)
    return false;
  std::string exe = link;
  if (exe.substr(exe.rfind('/') + 1).rfind("qemu-", 0) != 0)
    return false;
  if (executable.empty())
    return true;
  std::ifstream in(proc + "/cmdline");
  for (std::string argument; std::getline(in, argument, '\0');)
    if (sameFile(argument.starts_with('/') ? argument : proc + "/cwd/" + argument, executable))
      return true;
  return false;
}

} // namespace

std::optional<HostProcess> findHostProcess(int pid, uint64_t tid, const std::string &executable) {
  // Natively (a launch, an attach, gdbserver, lldb-server) the debugger's pid is the process and
  // every thread id one of its threads. Under qemu-user the pid may be made up, the thread ids
  // never are.
  if (pid <= 0)
    return std::nullopt;
  int group = threadGroup(tid != 0 ? tid : pid);
  if (group <= 0)
    return std::nullopt;
  bool native = group == pid;
  std::string exe = fmt::format("/proc/{}/exe", group);
  if (native && !executable.empty() && sameFile(exe, executable))
    return HostProcess{pid, false};
  if (emulatorRunning(group, executable))
    return HostProcess{group, true};
  if (native && executable.empty())
    return HostProcess{pid, false};
  return std::nullopt;
}

const std::optional<HostProcess> &HostProcessLookup::find(int pid, uint64_t tid,
                                                          const std::string &executable) {
  if (pid != pid_ || tid != tid_ || executable != executable_) {
    pid_ = pid;
    tid_ = tid;
    executable_ = executable;
    host_ = findHostProcess(pid, tid, executable);
  }
  return host_;
}

} // namespace strobe
