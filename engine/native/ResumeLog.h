// Each thread's latest ptrace request that resumed it, as a tracer's wrapped ptrace() makes them
// (GDB's, gdb-ext/WaitTap.h; lldb-server's, lldb-plugin/server-tap/). A tap may take a thread's
// sample stop only when the tracer last resumed that thread with PTRACE_CONT: resuming it the same
// way then changes nothing the tracer asked for, where a step or a system-call stop would be lost.
#pragma once

#include <sys/ptrace.h>
#include <sys/types.h>

#include <mutex>
#include <unordered_map>

namespace strobe {

class ResumeLog {
public:
  // A request the tracer is about to make of thread `tid`.
  void note(long request, pid_t tid) {
    switch (request) {
    case PTRACE_CONT:
    case PTRACE_SINGLESTEP:
    case PTRACE_SYSCALL:
    case PTRACE_SYSEMU:
    case PTRACE_SYSEMU_SINGLESTEP:
    case PTRACE_LISTEN:
    case PTRACE_DETACH:
    case PTRACE_KILL: {
      std::lock_guard lock(mutex_);
      byTid_[tid] = request;
      break;
    }
    default:
      break;
    }
  }
  // Whether the tracer last resumed `tid` with PTRACE_CONT.
  bool continued(pid_t tid) const { return lastWas(tid, PTRACE_CONT); }
  // Whether it last resumed `tid` with PTRACE_SINGLESTEP.
  bool singleStepped(pid_t tid) const { return lastWas(tid, PTRACE_SINGLESTEP); }
  // The thread has ended: its id may come to name another.
  void forget(pid_t tid) {
    std::lock_guard lock(mutex_);
    byTid_.erase(tid);
  }

private:
  bool lastWas(pid_t tid, long request) const {
    std::lock_guard lock(mutex_);
    auto it = byTid_.find(tid);
    return it != byTid_.end() && it->second == request;
  }

  mutable std::mutex mutex_; // lldb-server's threads may each call ptrace()
  std::unordered_map<pid_t, long> byTid_;
};

} // namespace strobe
