// Sample stops taken inside LLDB's private handling of them, which LLDB then never makes public.
//
// Why: in LLDB most of a sample's cost is the public stop strobe needs in order to read anything
// through SB (about 400 of the 1000 us a sample held the program here, before strobe read a
// register), and SB runs no plugin code earlier. But LLDB decides whether a signal's stop is
// public from the signal's stop flag, on its private state thread, after its gdb-remote thread has
// read lldb-server's stop reply, which holds every general-purpose register of the stopped thread;
// and LLDB's packet log writes that reply, synchronously and before passing it on, to a callback
// a plugin can own. So while armed the sample signal does not stop (LLDB resumes by itself, as
// for `process handle -s false`), gdb-remote packets are logged to this tap, and the tap hands
// each sample stop's reply to the plugin, which samples from it while the program is still
// stopped (registers from the reply, the stack unwound by strobe through the process's memory).
// A stop the plugin does not take there (another thread is stopped too, the engine is busy, the
// capture ends at it, a register is missing) the tap makes public by turning the signal's stop
// flag on before LLDB reads it, and the ordinary path takes it; the flag goes off again at the
// next resume.
//
// LLDB keeps a logging callback for the debugger's life and cannot remove it, so a tap is made
// once per debugger and never freed. While it is not armed it passes every line to the
// debugger's output, where a `log enable` without a file writes them.
#pragma once

#include <lldb/API/SBDebugger.h>
#include <lldb/API/SBUnixSignals.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>

namespace strobe::lldb_plugin {

class StopReplyTap {
public:
  // Runs on LLDB's gdb-remote thread for a sample stop of the one thread of a process: `reply` is
  // lldb-server's stop reply, `tid` the stopped thread. Returns whether it took the sample.
  using Take = std::function<bool(std::string_view reply, uint64_t tid)>;

  // The debugger's tap, made (and its callback installed) on first use.
  static StopReplyTap &of(lldb::SBDebugger debugger);

  // While armed, strobe's resumes (see beforeResume) leave stops of `signo` (LLDB's numbering) to
  // `take`. Disarming turns the signal's stop flag back on: every later stop of it is public.
  void arm(lldb::SBUnixSignals signals, int signo, Take take);
  void disarm();

  // Around each resume by strobe while armed: only the replies in between are sample stops (a
  // reply strobe asks for at a public stop is not).
  void beforeResume();
  void afterResume() { resuming_ = false; }

  // Arms a tap for a scope.
  class Armed {
  public:
    Armed(StopReplyTap &tap, lldb::SBUnixSignals signals, int signo, Take take) : tap_(tap) {
      tap_.arm(signals, signo, std::move(take));
    }
    ~Armed() { tap_.disarm(); }
    Armed(const Armed &) = delete;
    Armed &operator=(const Armed &) = delete;

  private:
    StopReplyTap &tap_;
  };

private:
  explicit StopReplyTap(lldb::SBDebugger debugger) : debugger_(debugger) {}
  static void onLog(const char *line, void *tap);
  void onLine(std::string_view line);
  // The sample stop in `reply`, a stop reply with the signal armed for.
  bool takeReply(std::string_view reply);
  void forward(std::string_view line);

  lldb::SBDebugger debugger_;
  std::mutex mutex_; // arming against the callback
  bool armed_ = false;
  bool ownsLog_ = false; // gdb-remote packets are logged for the tap, not for the user
  lldb::SBUnixSignals signals_;
  int signo_ = 0;
  Take take_;
  bool madePublic_ = false; // the stop flag is on for a stop the tap did not take
  std::atomic<bool> resuming_{false};
};

} // namespace strobe::lldb_plugin
