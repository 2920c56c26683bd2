#include "HiddenBreakpoints.h"

#include <lldb/API/SBBreakpoint.h>
#include <lldb/API/SBBreakpointName.h>
#include <lldb/API/SBError.h>
#include <lldb/API/SBMemoryRegionInfo.h>

#include <algorithm>

namespace strobe::lldb_plugin {
namespace {

constexpr const char *kName = "strobe";

} // namespace

class HiddenBreakpoints::Handle : public Breakpoint {
public:
  Handle(HiddenBreakpoints &table, lldb::SBTarget target, lldb::break_id_t id)
      : table_(table), target_(target), id_(id) {}
  ~Handle() override { table_.remove(target_, id_); }
  bool present() const override {
    lldb::SBTarget target = target_; // SBTarget's lookups are not const
    return target.FindBreakpointByID(id_).IsValid();
  }
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;

private:
  HiddenBreakpoints &table_;
  lldb::SBTarget target_;
  lldb::break_id_t id_;
};

HiddenBreakpoints::~HiddenBreakpoints() {
  std::vector<Entry> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(entries_);
  }
  for (Entry &entry : left)
    entry.target.BreakpointDelete(entry.id);
}

std::unique_ptr<Breakpoint> HiddenBreakpoints::insert(lldb::SBTarget target, uint64_t address,
                                                      BreakpointHandler handler) {
  if (!target.IsValid() || !handler)
    return nullptr;
  // LLDB would warn about an address it cannot patch, naming the breakpoint the user never set.
  lldb::SBMemoryRegionInfo region;
  if (lldb::SBProcess process = target.GetProcess();
      process.IsValid() &&
      (process.GetMemoryRegionInfo(address, region).Fail() || !region.IsExecutable()))
    return nullptr;
  // The name's permissions must be in place before a breakpoint takes the name: taking it copies
  // them into the breakpoint.
  lldb::SBBreakpointName name(target, kName);
  name.SetAllowList(false);
  name.SetAllowDelete(false);
  name.SetAllowDisable(false);
  name.SetHelpString("strobe's own breakpoints; strobe removes them when it is done");
  lldb::SBBreakpoint breakpoint = target.BreakpointCreateByAddress(address);
  if (!breakpoint.IsValid())
    return nullptr;
  if (breakpoint.GetNumResolvedLocations() == 0 || !breakpoint.AddName(kName)) {
    target.BreakpointDelete(breakpoint.GetID());
    return nullptr;
  }
  {
    std::lock_guard lock(mutex_);
    entries_.push_back({target, breakpoint.GetID(),
                        std::make_shared<const BreakpointHandler>(std::move(handler))});
  }
  breakpoint.SetCallback(&HiddenBreakpoints::onHit, this);
  return std::make_unique<Handle>(*this, target, breakpoint.GetID());
}

bool HiddenBreakpoints::owns(lldb::SBTarget target, lldb::break_id_t id) {
  return handlerOf(target, id) != nullptr;
}

std::shared_ptr<const BreakpointHandler> HiddenBreakpoints::handlerOf(lldb::SBTarget target,
                                                                      lldb::break_id_t id) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry &e) { return e.id == id && e.target == target; });
  return it == entries_.end() ? nullptr : it->handler;
}

void HiddenBreakpoints::remove(lldb::SBTarget target, lldb::break_id_t id) {
  {
    std::lock_guard lock(mutex_);
    std::erase_if(entries_, [&](const Entry &e) { return e.id == id && e.target == target; });
  }
  // A target LLDB has deleted, or a breakpoint the user deleted by number, makes this a no-op.
  target.BreakpointDelete(id);
}

bool HiddenBreakpoints::onHit(void *self, lldb::SBProcess &process, lldb::SBThread &thread,
                              lldb::SBBreakpointLocation &location) {
  auto &table = *static_cast<HiddenBreakpoints *>(self);
  if (std::shared_ptr<const BreakpointHandler> handler =
          table.handlerOf(process.GetTarget(), location.GetBreakpoint().GetID()))
    table.runner_(*handler, thread.GetThreadID());
  return table.stopOnHit_;
}

} // namespace strobe::lldb_plugin
