// The stack of a process on this host, unwound without asking the debugger: its memory read
// directly, its modules' CFI through ProcessModules. Both front-ends use it for the caller of
// every sample, where the debugger's own unwinder costs a round trip per frame (GDB: Python; LLDB:
// SBFrames, 50-90 us a sample); what it cannot answer exactly is left to the debugger.
#pragma once

#include "native/CfiUnwinder.h"
#include "native/ProcessModules.h"
#include "target/Isa.h"

#include <cstdint>
#include <vector>

namespace strobe {

// Reads `size` bytes at `address` of process `pid`; false when any of them is unreadable.
bool readProcessMemory(int pid, uint64_t address, void *out, size_t size);
// Reads `size` bytes at `address` of process `pid`, or when some are unreadable those up to the
// end of its first page (an instruction at the end of its mapping's last page); how many it read
// (0: not even those).
size_t readProcessMemoryPrefix(int pid, uint64_t address, void *out, size_t size);

class NativeStack {
public:
  NativeStack(Isa isa, int pid);

  int pid() const { return modules_.pid(); }
  ProcessModules &modules() { return modules_; }
  const ReadMemory &read() const { return read_; }

  // stack[0] = the pc of `regs` (registerTable(isa) order), then the return address of each
  // caller, up to `depth` entries in all; false when the unwinder cannot answer (no CFI, code it
  // does not model, a stack that does not grow towards the caller), for the debugger to judge.
  bool walk(const std::vector<uint64_t> &regs, unsigned depth, std::vector<uint64_t> &stack);

private:
  Isa isa_;
  ReadMemory read_;
  ProcessModules modules_;
  CfiUnwinder unwinder_;
};

} // namespace strobe
