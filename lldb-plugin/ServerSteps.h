// `strobe step`'s single steps taken inside lldb-server (server-tap/), where the library has the
// stepped thread step again at the plugin's word instead of reporting each step to LLDB.
//
// Why: LLDB's own step of one instruction costs about 0.7 ms (its thread plan, and for every stop
// a round of packets with lldb-server); a step inside lldb-server costs what a tracer's costs, the
// ptrace step and the wait. A run of steps begins with one step of LLDB's (stepOnce(), on a thread
// of its own, since it returns only when the run ends); the library posts the stop that ends it,
// and each of the plugin's "again" makes one more. finish() hands the last stop to lldb-server,
// which reports the end of its one step there. Any other stop (a breakpoint trap, the thread's
// end) goes to lldb-server at once and ends the run the same way; a signal LLDB passes goes to
// it too, and LLDB's step delivers it with a step that the run takes back at the handler's entry.
// (A watchpoint that fires during a step looks like the step's own trap: LldbTarget makes no runs
// with one.) While a ServerSteps is open, any single step of its thread that enters a signal
// handler ends at the handler's entry, also LLDB's own steps, which would take its first
// instruction with it.
//
// While a run holds a stop, LLDB's API is busy with the step: the thread's registers come with
// the stop (registers(), extendedRegisters()) and its memory is read directly. A caller that needs
// the API ends the run first.
#pragma once

#include "server-tap/TapChannel.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <thread>

namespace strobe::lldb_plugin {

class ServerSteps {
public:
  // The steps of thread `tid` of process `pid` through its lldb-server's channel; null when that
  // lldb-server has none.
  static std::unique_ptr<ServerSteps> open(int pid, uint64_t tid);
  ~ServerSteps(); // finish()es a run
  ServerSteps(const ServerSteps &) = delete;
  ServerSteps &operator=(const ServerSteps &) = delete;

  uint64_t tid() const { return tid_; }
  // Starts a run with LLDB's own step of the thread (`stepOnce`, which returns when the run
  // ends); whether a stop after a completed step is now held.
  bool start(std::function<void()> stepOnce);
  // With a stop held, steps once more; whether the next stop is held. False: the run ended,
  // after that step (stepMade()) or before it, when the library had stopped waiting for the
  // answer (seconds) and handed the held stop to lldb-server.
  bool stepAgain();
  bool stepMade() const { return stepMade_; }
  // Ends the run: a held stop goes to lldb-server, and LLDB's step returns.
  void finish();
  bool holding() const { return holding_; }
  // Whether the caller is the thread of LLDB's step that began the run (breakpoint callbacks of
  // its stop run there).
  bool onLldbStepThread() const { return lldbStepThread_.load() == std::this_thread::get_id(); }
  // The held stop's NT_PRSTATUS register set, and its extended registers' (ExtendedRegsets.h).
  std::span<const uint8_t> registers() const;
  std::span<const uint8_t> extendedRegisters() const;

private:
  ServerSteps(TapChannel *channel, uint64_t tid);
  // Claims the next posted stop of the thread; false when LLDB's step returned first.
  bool awaitStop();

  TapChannel *channel_;
  uint64_t tid_;
  bool holding_ = false;
  bool stepMade_ = false;
  std::thread lldbStep_;
  std::atomic<bool> lldbStepReturned_{false};
  std::atomic<std::thread::id> lldbStepThread_;
};

} // namespace strobe::lldb_plugin
