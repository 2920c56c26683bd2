#include "capture/CaptureNames.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>

namespace strobe {

CaptureNames::CaptureNames(Target &target, Capture &capture)
    : target_(target), capture_(capture), hostProcess_(target.isHostProcess()) {
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
  if (hostProcess_) {
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
  if (programReplaced_)
    return; // the target lists the new program's
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
  auto name = [this](uint64_t address) {
    return programReplaced_ ? nameFromCapture(address) : target_.symbolize(address);
  };
  for (uint64_t pc : pcs_) {
    if (capture_.symbols.count(pc))
      continue;
    const SymbolInfo &symbol = capture_.symbols.emplace(pc, name(pc)).first->second;
    // After an exec the process holds another program's code at that address.
    if (onPc && !programReplaced_)
      onPc(symbol);
  }
  for (uint64_t call : calls_)
    if (!capture_.symbols.count(call))
      capture_.symbols.emplace(call, name(call));
  pcs_.clear();
  calls_.clear();
}

SymbolInfo CaptureNames::nameFromCapture(uint64_t address) {
  // Without its line: the debugger named the function for another address.
  for (const auto &[named, known] : capture_.symbols)
    if (!known.function.empty() && known.size && address >= known.start &&
        address - known.start < known.size)
      return {known.function, known.start, known.size, {}, 0, {}};
  const ModuleInfo *module = capture_.moduleFor(address);
  if (!module)
    return {};
  auto [file, added] = files_.try_emplace(module->path);
  if (added)
    file->second = ElfImage::open(module->path);
  if (!file->second)
    return {};
  std::optional<ElfImage::FunctionSymbol> function =
      file->second->functionAt(address - module->bias);
  if (!function)
    return {};
  return {std::move(function->name), function->start + module->bias, function->size, {}, 0, {}};
}

} // namespace strobe
