// A process GDB traces on this host, read and stepped directly: GDB's main thread (where strobe
// runs) is the ptrace tracer of every thread GDB debugs natively, so one PTRACE_GETREGS replaces
// a Python round trip per register and one PTRACE_SINGLESTEP replaces a `stepi` command. Every
// method answers "ask GDB" (false, LeftToGdb) for what it cannot do exactly as GDB would.
#pragma once

#include "NextPc.h"
#include "native/NativeStack.h"
#include "target/Target.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace strobe::gdb {

class NativeTracee {
public:
  NativeTracee(Isa isa, int pid);

  int pid() const { return stack_.pid(); }
  NativeStack &stack() { return stack_; }

  // Registers by ptrace and the stack by the CFI unwinder; false when either cannot answer.
  bool readThread(uint64_t tid, unsigned depth, ThreadSnapshot &out);
  bool readExtended(uint64_t tid, ExtendedSnapshot &out);
  // Runtime addresses of the functions named exactly `name` in every mapped ELF module.
  std::vector<uint64_t> functionsNamed(std::string_view name) {
    return stack_.modules().functionsNamed(name);
  }
  // The ELF function symbol covering `pc` in the module mapped there.
  std::optional<ElfImage::FunctionSymbol> functionAt(uint64_t pc) {
    return stack_.modules().functionAt(pc);
  }
  // The runtime place of the ELF data object named exactly `name` (see ProcessModules).
  std::optional<DataLocation> dataNamed(std::string_view name) {
    return stack_.modules().dataNamed(name);
  }

  enum class Step {
    Done,      // one instruction executed; GDB's register cache is now stale
    LeftToGdb, // not stepped (a signal that interrupted the step is queued again for GDB)
    Vanished,  // the thread died during the step (killed from outside); GDB was not told
  };
  // One instruction of `tid` when the instruction cannot arrive at any address in `avoid` (the
  // breakpoint locations GDB would report or act on) and is no system call or trap.
  Step step(uint64_t tid, const std::unordered_set<uint64_t> &avoid, int &exitCode);

private:
  Isa isa_;
  NativeStack stack_;
  NextPc nextPc_;
  std::vector<uint64_t> regs_; // scratch for step()
};

} // namespace strobe::gdb
