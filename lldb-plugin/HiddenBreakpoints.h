// strobe's own breakpoints in LLDB (Target::insertBreakpoint): SB breakpoints the user does not
// see, whose hits run an engine handler and then continue without a stop being shown.
//
// Why an SB breakpoint with a C++ callback: LLDB runs the callback when the stop event is taken
// off its queue, on whichever thread waits for it (the synchronous continue of `strobe record`,
// the background sampler, LLDB's own event handler after the user's `continue`), with the process
// publicly stopped, so the handler can read registers and memory there; the callback's `false`
// makes LLDB step over the breakpoint and resume before anyone else sees the stop. A user
// breakpoint at the same address is another owner of the same site and still stops.
//
// Why a breakpoint name: its permissions keep the breakpoint out of `breakpoint list`, `breakpoint
// delete` and `breakpoint disable` without arguments. LLDB still obeys `breakpoint delete N` or
// `breakpoint disable N` for its number; its hits then just end, and removing it later is a no-op.
#pragma once

#include "target/Target.h"

#include <lldb/API/SBBreakpointLocation.h>
#include <lldb/API/SBProcess.h>
#include <lldb/API/SBTarget.h>
#include <lldb/API/SBThread.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace strobe::lldb_plugin {

class HiddenBreakpoints {
public:
  // Runs one hit's handler: the front-end serialises it with the rest of the engine.
  using HitRunner = std::function<void(const BreakpointHandler &handler, uint64_t tid)>;

  explicit HiddenBreakpoints(HitRunner runner) : runner_(std::move(runner)) {}
  // Removes the breakpoints still inserted: their callbacks point at this object.
  ~HiddenBreakpoints();
  HiddenBreakpoints(const HiddenBreakpoints &) = delete;
  HiddenBreakpoints &operator=(const HiddenBreakpoints &) = delete;

  // Null when LLDB cannot place a breakpoint at `address` in `target`'s process.
  std::unique_ptr<Breakpoint> insert(lldb::SBTarget target, uint64_t address,
                                     BreakpointHandler handler);
  // Breakpoint `id` of `target` is one of strobe's.
  bool owns(lldb::SBTarget target, lldb::break_id_t id);

  // While one lives, a hit stops the process after its handler ran (a single step that lands on
  // one of strobe's breakpoints: LLDB 19 reports that as the breakpoint's hit, and a callback
  // saying "continue" would turn the step into a free run).
  class StopOnHit {
  public:
    explicit StopOnHit(HiddenBreakpoints &table) : table_(table) { table_.stopOnHit_ = true; }
    ~StopOnHit() { table_.stopOnHit_ = false; }
    StopOnHit(const StopOnHit &) = delete;
    StopOnHit &operator=(const StopOnHit &) = delete;

  private:
    HiddenBreakpoints &table_;
  };

private:
  class Handle;
  struct Entry {
    lldb::SBTarget target;
    lldb::break_id_t id;
    // Shared with a running hit, so that the handler may remove its own breakpoint.
    std::shared_ptr<const BreakpointHandler> handler;
  };

  static bool onHit(void *self, lldb::SBProcess &process, lldb::SBThread &thread,
                    lldb::SBBreakpointLocation &location);
  std::shared_ptr<const BreakpointHandler> handlerOf(lldb::SBTarget target, lldb::break_id_t id);
  void remove(lldb::SBTarget target, lldb::break_id_t id);

  HitRunner runner_;
  std::atomic<bool> stopOnHit_{false};
  std::mutex mutex_; // hits arrive on LLDB's threads
  std::vector<Entry> entries_;
};

} // namespace strobe::lldb_plugin
