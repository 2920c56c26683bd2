// The user's breakpoints, and LLDB's own, while `strobe step` single-steps a thread in LLDB.
//
// Why: LLDB 19 reports a step that lands on a breakpoint as that breakpoint's hit, and when the
// breakpoint declines the hit (a false condition, an ignore count, auto-continue) it resumes the
// whole process: the step becomes a free run, untraced. So while a trace steps, each location of
// the user's enabled breakpoints has a hidden owner of its own, which stops there (under
// HiddenBreakpoints::StopOnHit) whatever the user's says; and a stop at such a location is the
// user's only if LLDB counted it as the user's breakpoint would stop: its hit count moved, no
// ignore count was used up, and it does not continue by itself; or LLDB removed the breakpoint
// with the hit (one-shot). The judge is the locations at the stop's pc, not the stop's list of
// owners, which drops a breakpoint LLDB has removed.
// LLDB's internal breakpoints (the dynamic loader's, at _dl_debug_state, which every dlopen and
// dlclose calls) never stop, so a step onto one went on through the call and the return: each
// has a hidden owner too, and a stop there is the step's. At that stop LLDB has resolved the
// user's breakpoints in a library just loaded: their new locations are guarded from then on.
#pragma once

#include "HiddenBreakpoints.h"

#include <lldb/API/SBTarget.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace strobe::lldb_plugin {

class SteppedBreakpoints {
public:
  SteppedBreakpoints(HiddenBreakpoints &hidden, lldb::SBTarget target);

  // For a breakpoint stop at `pc` after a step: the user's breakpoint locations there that
  // stopped it as LLDB would without the step ("2.1"); none, a stop for the step only.
  std::vector<std::string> userStopped(uint64_t pc);

private:
  struct Counts {
    uint32_t hits = 0;
    uint32_t locationIgnore = 0;
    uint32_t breakpointIgnore = 0;
  };
  struct Guarded {
    lldb::break_id_t breakpoint;
    lldb::break_id_t location;
    Counts counts; // as of the last look
    bool removed;  // LLDB no longer has it
  };

  // Guards the enabled locations of the user's breakpoints and LLDB's not guarded yet.
  void guardNewLocations();
  // A hidden owner at each enabled location of `breakpoint` not guarded yet; the user's
  // (`user`) are judged by userStopped().
  void guard(lldb::SBBreakpoint breakpoint, bool user);

  HiddenBreakpoints &hidden_;
  lldb::SBTarget target_;
  std::vector<std::unique_ptr<Breakpoint>> stoppers_;
  std::set<std::pair<lldb::break_id_t, lldb::break_id_t>> locations_; // guarded, user's or not
  std::multimap<uint64_t, Guarded> guarded_;                          // the user's, by address
  std::set<uint64_t> internal_; // addresses of LLDB's own breakpoints
};

} // namespace strobe::lldb_plugin
