// Names what a capture records, through the Target port: the modules (kept once seen, so the
// addresses of a library unloaded since still symbolize), the threads (by name where the process
// is on this host), and the symbols of the pcs and return addresses its stacks hold, looked up in
// batches. The sampler and the allocation tracker both record stacks and share this.
//
// After an exec the debugger holds the new program's modules and symbols, so what the capture
// noted before it is named from what the capture itself knows (see programReplaced()).
#pragma once

#include "capture/Capture.h"
#include "native/ElfImage.h"
#include "target/Target.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>

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
  // The process executed a new program: from now on the target is not asked to name anything.
  // What is pending takes the name of a function the capture already named around it, else the
  // ELF symbol of its module's file as the capture listed it, else stays unnamed.
  void programReplaced() { programReplaced_ = true; }

private:
  SymbolInfo nameFromCapture(uint64_t address);

  Target &target_;
  Capture &capture_;
  // Asked once: noteThread() runs inside stops the debugger has not made public, where LLDB's API
  // would wait for the process (see RoutineSample).
  bool hostProcess_;
  bool modulesStale_ = true;
  bool programReplaced_ = false;
  std::set<uint64_t> pcs_;
  std::set<uint64_t> calls_;   // return address - 1
  std::set<uint64_t> threads_; // noted by this recorder
  // The old program's files after an exec, by path; null when one cannot be read.
  std::map<std::string, std::unique_ptr<ElfImage>> files_;
};

} // namespace strobe
