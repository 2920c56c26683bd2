#include "SteppedBreakpoints.h"

#include <lldb/API/SBAddress.h>
#include <lldb/API/SBBreakpoint.h>
#include <lldb/API/SBBreakpointLocation.h>
#include <lldb/API/SBModule.h>
#include <lldb/API/SBSection.h>

#include <algorithm>
#include <utility>

namespace strobe::lldb_plugin {

namespace {

// LLDB numbers its internal breakpoints -1, -2, ... and lists them nowhere the SB API reaches; a
// deleted one (each run of the process makes the loader's anew) leaves its number unused.
constexpr lldb::break_id_t kInternalIdsUnusedInARow = 64;

} // namespace

SteppedBreakpoints::SteppedBreakpoints(HiddenBreakpoints &hidden, lldb::SBTarget target)
    : hidden_(hidden), target_(target) {
  guardNewLocations();
}

void SteppedBreakpoints::guardNewLocations() {
  for (uint32_t i = 0; i < target_.GetNumBreakpoints(); ++i) {
    lldb::SBBreakpoint breakpoint = target_.GetBreakpointAtIndex(i);
    if (!hidden_.owns(target_, breakpoint.GetID()))
      guard(breakpoint, true);
  }
  for (lldb::break_id_t id = -1, unused = 0; unused < kInternalIdsUnusedInARow; --id) {
    lldb::SBBreakpoint breakpoint = target_.FindBreakpointByID(id);
    unused = breakpoint.IsValid() ? 0 : unused + 1;
    if (breakpoint.IsValid())
      guard(breakpoint, false);
  }
}

void SteppedBreakpoints::guard(lldb::SBBreakpoint breakpoint, bool user) {
  if (!breakpoint.IsEnabled())
    return;
  for (size_t k = 0; k < breakpoint.GetNumLocations(); ++k) {
    lldb::SBBreakpointLocation location = breakpoint.GetLocationAtIndex(k);
    if (!location.IsEnabled() || !location.IsResolved() ||
        !locations_.emplace(breakpoint.GetID(), location.GetID()).second)
      continue;
    const uint64_t address = location.GetLoadAddress();
    if (!user) {
      if (internal_.insert(address).second)
        noteModuleOf(location.GetAddress());
      continue;
    }
    addStopper(address);
    guarded_.emplace(address, Guarded{breakpoint.GetID(),
                                      location.GetID(),
                                      {location.GetHitCount(), location.GetIgnoreCount(),
                                       breakpoint.GetIgnoreCount()},
                                      false});
  }
}

void SteppedBreakpoints::noteModuleOf(lldb::SBAddress address) {
  lldb::SBModule module = address.GetModule();
  uint64_t start = UINT64_MAX, end = 0;
  for (size_t i = 0; i < module.GetNumSections(); ++i) {
    lldb::SBSection section = module.GetSectionAtIndex(i);
    const uint64_t load = section.GetLoadAddress(target_);
    if (load == LLDB_INVALID_ADDRESS)
      continue;
    start = std::min(start, load);
    end = std::max(end, load + section.GetByteSize());
  }
  if (start < end)
    internalModules_.emplace_back(start, end);
}

std::optional<uint64_t>
SteppedBreakpoints::unguardedLanding(uint64_t pc, const InstructionAt &instructionAt) const {
  // Once each has its owner, a run's steps through the loader need no decoding.
  if (internalGuarded_.size() == internal_.size() ||
      std::none_of(internalModules_.begin(), internalModules_.end(),
                   [pc](const auto &range) { return range.first <= pc && pc < range.second; }))
    return std::nullopt;
  const std::optional<InstructionInfo> insn = instructionAt(pc);
  if (!insn)
    return std::nullopt;
  // Where it goes when it is certain; a breakpoint at a function's entry is reached by a call.
  std::optional<uint64_t> landing = insn->target;
  if (insn->kind == BranchKind::None)
    landing = insn->address + insn->length;
  if (!landing || !internal_.count(*landing) || internalGuarded_.count(*landing))
    return std::nullopt;
  return landing;
}

void SteppedBreakpoints::guardInternal(uint64_t address) {
  if (internalGuarded_.insert(address).second)
    addStopper(address);
}

void SteppedBreakpoints::addStopper(uint64_t address) {
  if (std::unique_ptr<Breakpoint> stopper = hidden_.insert(target_, address, [](uint64_t) {}))
    stoppers_.push_back(std::move(stopper));
}

std::vector<std::string> SteppedBreakpoints::userStopped(uint64_t pc) {
  if (internal_.count(pc))
    guardNewLocations();
  std::vector<std::string> stopped;
  for (auto [at, end] = guarded_.equal_range(pc); at != end; ++at) {
    Guarded &guarded = at->second;
    const std::string name =
        std::to_string(guarded.breakpoint) + "." + std::to_string(guarded.location);
    lldb::SBBreakpoint breakpoint = target_.FindBreakpointByID(guarded.breakpoint);
    lldb::SBBreakpointLocation location = breakpoint.FindLocationByID(guarded.location);
    if (!location.IsValid()) {
      // LLDB removed it with this hit (one-shot), or a command of the user's did: the first stop
      // here since is the user's, and nothing is left to judge by.
      if (!std::exchange(guarded.removed, true))
        stopped.push_back(name);
      continue;
    }
    const Counts now{location.GetHitCount(), location.GetIgnoreCount(),
                     breakpoint.GetIgnoreCount()};
    if (now.hits != guarded.counts.hits && now.locationIgnore == guarded.counts.locationIgnore &&
        now.breakpointIgnore == guarded.counts.breakpointIgnore && !location.GetAutoContinue() &&
        !breakpoint.GetAutoContinue())
      stopped.push_back(name);
    guarded.counts = now;
  }
  return stopped;
}

} // namespace strobe::lldb_plugin
