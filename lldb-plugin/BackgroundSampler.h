// `strobe start`: keeps the process running under strobe's control while the user keeps the
// prompt.
//
// Why a thread of our own with a synchronous continue: SB has no hook that runs at a stop before
// LLDB reports it. A stop that reaches the debugger's event handler is printed ("Process N
// stopped ... signal SIGRTMAX-1") whatever the signal's notify flag says, and a `continue` the
// user types returns at it. The synchronous SBProcess::Continue() is the one SB call that keeps
// the process's events from everybody else (a hijack listener) until the next stop, so this
// thread resumes with it, samples, and resumes again: nobody else sees strobe's stops, and a stop
// costs what it costs in `strobe record`. The alternatives cost more per stop and cannot be
// undone safely: a stop hook runs only after LLDB has made the stop public, a command stop hook
// cannot tell strobe's stops from the user's, and a Python one (~0.5 ms more per stop here) would
// have to be deleted while LLDB iterates its stop hooks. A stop strobe did not cause ends the
// thread, which shows it as `process status` would. While the thread runs the debugger is
// synchronous (SBProcess::Continue() picks its mode from that flag); it is put back at the end.
//
// Most sample stops never become public (StopReplyTap); each of the others is public for the time
// it is read: a command the user types at that moment sees the process stopped (`process
// interrupt` then answers "Process is not running"; `strobe stop` always works).
#pragma once

#include <lldb/API/SBDebugger.h>
#include <lldb/API/SBProcess.h>

#include <atomic>
#include <thread>

namespace strobe::lldb_plugin {

class LldbTarget;

class BackgroundSampler {
public:
  // Signals go to `hostPid` (an emulator's under qemu-user), numbered as the host numbers them.
  BackgroundSampler(LldbTarget &target, lldb::SBProcess process, int hostPid, int signo);
  // Ends the thread: see stop().
  ~BackgroundSampler();
  BackgroundSampler(const BackgroundSampler &) = delete;
  BackgroundSampler &operator=(const BackgroundSampler &) = delete;

  // From any other thread: makes the process stop once more with the sample signal and waits for
  // the thread to end there. A sample stop stays hidden until LldbTarget::settle() lets the
  // process run on; any other stop has been shown to the user.
  void stop();
  // From the thread itself (the session ended the capture inside onStop()): end after this stop.
  void requestExit() { exitRequested_ = true; }
  bool onThread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Called on a background sampler's thread that has been asked to end (from LLDB callbacks
  // that run on whichever thread resumed the process).
  static bool endingOnThisThread();
  bool finished() const { return finished_; }

private:
  void run();

  LldbTarget &target_;
  lldb::SBProcess process_;
  int hostPid_;
  int signo_;
  bool wasAsync_;
  std::atomic<bool> exitRequested_{false};
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

} // namespace strobe::lldb_plugin
