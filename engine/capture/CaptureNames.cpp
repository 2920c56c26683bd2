#include "capture/CaptureNames.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>

namespace strobe {

CaptureNames::CaptureNames(Target &target, Capture &capture) : target_(target), capture_(capture) {
  for (const ThreadInfo &t : capture.threads)
    threads_.insert(t.tid);
}

void CaptureNames::noteThread(uint64_t tid) {
  if (!threads_.insert(tid).second)
    return;
  // Another recorder of the same capture (sampler, heap tracker) may have named it already.
  if (std::any_of(capture_.threads.begin(), capture_.threads.end(),
                  [tid](const ThreadInfo &t) { return t.tid == tid; }))
    return;
  ThreadInfo info{tid, {}};
  if (target_.isHostProcess()) {
    int pid = capture_.header.pid ? capture_.header.pid : target_.pid();
    std::ifstream in(fmt::format("/proc/{}/task/{}/comm", pid, tid));
    std::getline(in, info.name);
  }
  capture_.threads.push_back(std::move(info));
}

void CaptureNames::noteStack(std::span<const uint64_t> stack) {
  for (size_t i = 0; i < stack.size(); ++i) {
    const uint64_t address = i == 0 ? stack[i] : stack[i] - 1;
    if (capture_.symbols.count(address))
      continue;
    (i == 0 ? pcs_ : calls_).insert(address);
    if (!capture_.moduleFor(address))
      modulesStale_ = true;
  }
}

void CaptureNames::refreshModules() {
  for (ModuleInfo &m : target_.modules()) {
    bool known =
        std::any_of(capture_.modules.begin(), capture_.modules.end(),
                    [&](const ModuleInfo &k) { return k.path == m.path && k.start == m.start; });
    if (!known)
      capture_.modules.push_back(std::move(m));
  }
  modulesStale_ = false;
}

void CaptureNames::symbolizePending(const std::function<void(const SymbolInfo &)> &onPc) {
  if (modulesStale_)
    refreshModules();
  for (uint64_t pc : pcs_) {
    if (capture_.symbols.count(pc))
      continue;
    const SymbolInfo &symbol = capture_.symbols.emplace(pc, target_.symbolize(pc)).first->second;
    if (onPc)
      onPc(symbol);
  }
  for (uint64_t call : calls_)
    if (!capture_.symbols.count(call))
      capture_.symbols.emplace(call, target_.symbolize(call));
  pcs_.clear();
  calls_.clear();
}

} // namespace strobe
