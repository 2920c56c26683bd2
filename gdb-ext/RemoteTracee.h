// A process GDB debugs through gdbserver, stepped with the stub's own packets sent through
// `maint packet`: a `vCont;s` and a `g` a step, where GDB's `stepi` makes eight round trips (its
// breakpoints out and in, a stack read, the thread list) and its Python reads the registers one at
// a time. Like NativeTracee it steps only where GDB would have had nothing to do but the step
// (the same NextPc test against the same breakpoint locations), and it hands GDB the rest.
//
// The stub makes a stopped thread its current one for `g`: GDB believes its own choice (the last
// `Hg` it sent, or the thread of the last stop it saw), so the front-end makes GDB read the thread
// read or stepped here once it takes over again (PyTarget::syncGdb).
#pragma once

#include "NextPc.h"
#include "target/RemotePackets.h"
#include "target/Target.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace strobe::gdb {

class RemoteTracee {
public:
  // Sends one packet and returns the stub's reply; nullopt when GDB could not send it.
  using Exchange = std::function<std::optional<std::string>(const std::string &packet)>;
  struct Layout {
    std::string threadPrefix;             // "p<pid>." with multiprocess extensions, else ""
    std::vector<RemoteRegister> regs;     // the ISA's registers (Isa.h), in order
    std::vector<RemoteRegister> extended; // its extended registers, in order
  };
  RemoteTracee(Isa isa, Layout layout, Exchange exchange);

  // Whether it steps at all: NextPc models the ISA.
  bool steps() const { return nextPc_.modelled(); }

  // A thread's registers from the stub's block, read once after each step (depth 1: the pc is
  // the stack; deeper stacks are GDB's to unwind).
  bool readThread(uint64_t tid, unsigned depth, ThreadSnapshot &out);
  bool readExtended(uint64_t tid, ExtendedSnapshot &out);
  // GDB acts on the process again: what was read here may be stale.
  void forget() {
    readTid_ = 0;
    code_.clear();
  }

  enum class Step {
    Done,      // one instruction executed; GDB's register cache is now stale
    LeftToGdb, // nothing sent that moved the thread
    Signal,    // a signal (`number`, the host's) stopped the thread before the instruction ran
    Vanished,  // the process ended during the step (`number`: exit code, or -signal)
    Unexpected // the stub reported something a single step of that thread cannot
  };
  // Throws Interrupted for Ctrl-C (after a step that ran: at the next call).
  Step step(uint64_t tid, const std::unordered_set<uint64_t> &avoid, int &number);

private:
  // The thread's registers into regs_ and block_ by `g`, after making it the stub's current
  // thread with `Hg` where `select`.
  bool fetch(uint64_t tid, bool select);
  bool read(uint64_t address, void *out, size_t size);
  std::string threadId(uint64_t tid) const;

  Isa isa_;
  Layout layout_;
  Exchange exchange_;
  NextPc nextPc_;
  uint64_t readTid_ = 0;     // whose registers regs_ and block_ hold, 0 for none
  bool interrupted_ = false; // Ctrl-C came during a step that ran
  std::vector<uint64_t> regs_;
  std::string block_; // the `g` reply they came from, for the extended registers
  std::unordered_map<uint64_t, std::vector<uint8_t>> code_;
};

} // namespace strobe::gdb
