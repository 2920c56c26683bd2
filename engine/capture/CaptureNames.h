// Names what a capture records, through the Target port: the modules (kept once seen, so the
// addresses of a library unloaded since still symbolize), the threads (by name where the process
// is on this host), and the symbols of the pcs and return addresses its stacks hold, looked up in
// batches. The sampler and the allocation tracker both record stacks and share this.
#pragma once

#include "capture/Capture.h"
#include "target/Target.h"

#include <cstdint>
#include <functional>
#include <set>
#include <span>

namespace strobe {

class CaptureNames {
public:
  CaptureNames(Target &target, Capture &capture);

  void noteThread(uint64_t tid);
  // stack[0] is a pc; the rest are return addresses, named after their call (address - 1).
  void noteStack(std::span<const uint64_t> stack);
  bool pending() const { return !pcs_.empty() || !calls_.empty(); }
  // Names what was noted since the last call; `onPc` sees each new frame-0 symbol.
  void symbolizePending(const std::function<void(const SymbolInfo &)> &onPc = {});
  void refreshModules();

private:
  Target &target_;
  Capture &capture_;
  bool modulesStale_ = true;
  std::set<uint64_t> pcs_;
  std::set<uint64_t> calls_;   // return address - 1
  std::set<uint64_t> threads_; // noted by this recorder
};

} // namespace strobe
