// The user's breakpoints while `strobe step` single-steps a thread in LLDB.
//
// Why: LLDB 19 reports a step that lands on a breakpoint as that breakpoint's hit, and when the
// breakpoint declines the hit (a false condition, an ignore count, auto-continue) it resumes the
// whole process: the step becomes a free run, untraced. So while a trace steps, each location of
// the user's enabled breakpoints has a hidden owner of its own, which stops there (under
// HiddenBreakpoints::StopOnHit) whatever the user's says; and a stop at such a location is the
// user's only if LLDB counted it as the user's breakpoint would stop: its hit count moved, no
// ignore count was used up, and it does not continue by itself.
#pragma once

#include "HiddenBreakpoints.h"

#include <lldb/API/SBTarget.h>
#include <lldb/API/SBThread.h>

#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace strobe::lldb_plugin {

class SteppedBreakpoints {
public:
  SteppedBreakpoints(HiddenBreakpoints &hidden, lldb::SBTarget target);

  // For a breakpoint stop of `thread` after a step: whether one of the user's breakpoints among
  // its owners stopped it, as LLDB would without the step.
  bool userStopped(lldb::SBThread &thread);

private:
  struct Counts {
    uint32_t hits = 0;
    uint32_t locationIgnore = 0;
    uint32_t breakpointIgnore = 0;
  };
  using Key = std::pair<lldb::break_id_t, lldb::break_id_t>; // breakpoint, location

  lldb::SBTarget target_;
  std::vector<std::unique_ptr<Breakpoint>> stoppers_;
  std::map<Key, Counts> counts_; // each guarded location's, as of the last look
};

} // namespace strobe::lldb_plugin
