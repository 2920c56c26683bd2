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
// gets a hidden owner too, before the first step that lands there (a hidden owner takes a
// breakpoint number, which most traces need not spend), and a stop there is the step's. At that
// stop LLDB has resolved the user's breakpoints in a library just loaded: their new locations
// are guarded from then on.
#pragma once

#include "HiddenBreakpoints.h"
#include "isa/InstructionInfo.h"

#include <lldb/API/SBTarget.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
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

  // The instruction at an address, if it is one.
  using InstructionAt = std::function<std::optional<InstructionInfo>(uint64_t)>;
  // Which of LLDB's own breakpoints without a hidden owner a step of the instruction at `pc` goes
  // to, if any. Decodes only inside the modules that hold such breakpoints (the loader).
  std::optional<uint64_t> unguardedLanding(uint64_t pc, const InstructionAt &instructionAt) const;
  // Gives LLDB's breakpoint at `address` its hidden owner. Not during a run of steps inside
  // lldb-server, which keeps LLDB's API busy.
  void guardInternal(uint64_t address);

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

  // Guards the enabled locations of the user's breakpoints not guarded yet, and notes LLDB's.
  void guardNewLocations();
  // Hidden owners at each enabled location of the user's `breakpoint` (`user`) not guarded yet,
  // judged by userStopped(); LLDB's own are noted for guardInternal().
  void guard(lldb::SBBreakpoint breakpoint, bool user);
  // A hidden owner at `address`, with nothing to do at its hits but stop the step.
  void addStopper(uint64_t address);
  // Notes the load addresses of the module that holds `address`.
  void noteModuleOf(lldb::SBAddress address);

  HiddenBreakpoints &hidden_;
  lldb::SBTarget target_;
  std::vector<std::unique_ptr<Breakpoint>> stoppers_;
  std::set<std::pair<lldb::break_id_t, lldb::break_id_t>> locations_; // seen, user's or LLDB's
  std::multimap<uint64_t, Guarded> guarded_;                          // the user's, by address
  std::set<uint64_t> internal_;                                       // LLDB's own breakpoints
  std::set<uint64_t> internalGuarded_;                                // those with a hidden owner
  std::vector<std::pair<uint64_t, uint64_t>> internalModules_; // [start, end) of their modules
};

} // namespace strobe::lldb_plugin
