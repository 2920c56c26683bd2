// A sample stop a front-end hands the engine before its debugger handles the stop
// (Session::takeRoutineSample), so that the debugger never makes it public: LLDB's stop reply
// (lldb-plugin/StopReplyTap.h), lldb-server's wait for the inferior (lldb-plugin/ServerTap.h),
// GDB's wait for the inferior (gdb-ext/WaitTap.h). The front-end
// reads the stopped thread first, so that a stop it cannot read goes the debugger's way
// untouched; while the engine takes the stop, the front-end's threads() and readThread() answer
// from that read (active()).
#pragma once

#include "target/Target.h"

#include <cstdint>
#include <vector>

namespace strobe {

class Session;

class RoutineSample {
public:
  // The stack depth of the capture's samples, from the front-end's reads through the debugger
  // while armed; 0 until the first of them, and then no stop is read early.
  unsigned depth() const { return depth_; }
  void noteDepth(unsigned depth) { depth_ = depth; }

  // Where the front-end reads the stopped thread (with depth()) before offer().
  ThreadSnapshot &snapshot() { return snapshot_; }
  // Offers the stop of snapshot().tid to the engine; whether it took the sample.
  bool offer(Session &session, int signo);

  bool active() const { return active_; }
  // While active(): the thread of the stop (the only one the engine reads: a process's only
  // thread, or the one its signal stopped, Arming::stopsOneThread()), read as snapshot() holds it;
  // a read of another depth (a breakpoint handler's own) walks the stack again with `walker` (a
  // NativeStack).
  std::vector<uint64_t> threads() const { return {snapshot_.tid}; }
  template <typename Walker>
  bool readThread(uint64_t tid, unsigned depth, ThreadSnapshot &out, Walker &walker) const {
    if (tid != snapshot_.tid)
      return false;
    out = snapshot_;
    return depth == depth_ || walker.walk(out.regs, depth, out.stack);
  }

private:
  bool active_ = false;
  unsigned depth_ = 0;
  ThreadSnapshot snapshot_;
};

} // namespace strobe
