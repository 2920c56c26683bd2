#include "SteppedBreakpoints.h"

#include <lldb/API/SBBreakpoint.h>
#include <lldb/API/SBBreakpointLocation.h>

namespace strobe::lldb_plugin {
namespace {

lldb::SBBreakpointLocation locationOf(lldb::SBTarget &target, lldb::break_id_t breakpoint,
                                      lldb::break_id_t location) {
  return target.FindBreakpointByID(breakpoint).FindLocationByID(location);
}

} // namespace

SteppedBreakpoints::SteppedBreakpoints(HiddenBreakpoints &hidden, lldb::SBTarget target)
    : target_(target) {
  for (uint32_t i = 0; i < target_.GetNumBreakpoints(); ++i) {
    lldb::SBBreakpoint breakpoint = target_.GetBreakpointAtIndex(i);
    if (!breakpoint.IsEnabled() || hidden.owns(target_, breakpoint.GetID()))
      continue;
    for (size_t k = 0; k < breakpoint.GetNumLocations(); ++k) {
      lldb::SBBreakpointLocation location = breakpoint.GetLocationAtIndex(k);
      if (!location.IsEnabled() || !location.IsResolved())
        continue;
      if (std::unique_ptr<Breakpoint> stopper =
              hidden.insert(target_, location.GetLoadAddress(), [](uint64_t) {}))
        stoppers_.push_back(std::move(stopper));
      counts_[{breakpoint.GetID(), location.GetID()}] = {
          location.GetHitCount(), location.GetIgnoreCount(), breakpoint.GetIgnoreCount()};
    }
  }
}

bool SteppedBreakpoints::userStopped(lldb::SBThread &thread) {
  bool stopped = false;
  // The reason's data: a (breakpoint, location) pair for each owner of the site.
  const size_t count = thread.GetStopReasonDataCount();
  for (size_t i = 0; i + 1 < count; i += 2) {
    const Key key{static_cast<lldb::break_id_t>(thread.GetStopReasonDataAtIndex(i)),
                  static_cast<lldb::break_id_t>(thread.GetStopReasonDataAtIndex(i + 1))};
    auto known = counts_.find(key);
    if (known == counts_.end())
      continue; // strobe's own
    lldb::SBBreakpoint breakpoint = target_.FindBreakpointByID(key.first);
    lldb::SBBreakpointLocation location = locationOf(target_, key.first, key.second);
    if (!location.IsValid()) {
      stopped = true; // gone since: nothing to judge by, so the stop stands
      continue;
    }
    const Counts now{location.GetHitCount(), location.GetIgnoreCount(),
                     breakpoint.GetIgnoreCount()};
    if (now.hits != known->second.hits && now.locationIgnore == known->second.locationIgnore &&
        now.breakpointIgnore == known->second.breakpointIgnore && !location.GetAutoContinue() &&
        !breakpoint.GetAutoContinue())
      stopped = true;
    known->second = now;
  }
  return stopped;
}

} // namespace strobe::lldb_plugin
