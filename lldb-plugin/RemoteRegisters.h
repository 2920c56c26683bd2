// All general-purpose registers of a stopped thread in one gdb-remote request, and all extended
// ones in another.
//
// Why not SBFrame registers alone: at every stop LLDB replaces the registers lldb-server sent
// with the stop by the few (pc, sp, fp) of its jThreadsInfo reply, so each other register read
// through an SBValue is a `p` round trip plus the SBValue machinery, ~13 us apiece, ~220 us for
// the x86-64 table (a `g` packet, plugin.process.gdb-remote.use-g-packet-for-reading, is no
// faster: lldb-server reads every register set for it). lldb-server answers `qThreadStopInfo`
// with every general-purpose register of the thread; sent through LLDB's own `process plugin
// packet send` (on the connection LLDB holds, serialised with LLDB's own packets) it costs
// ~60-80 us, command included. On the demo fixture a whole sample (stop, registers, caller,
// resume) went from ~480-620 us to ~330-390 us. Every Linux process LLDB debugs, local or remote,
// is a gdb-remote one; anything else, or a register the reply lacks, falls back to SBValues.
//
// The extended registers (Target::readExtended: segment selectors, x87, SSE and AVX; v0-v31 on
// AArch64) are not in that reply, and through SBValues each is a `p` round trip, ~50 of them per
// single step of a step trace. One `g` packet holds them all: lldb-server's register file image,
// each register at the offset its qRegisterInfo gives.
#pragma once

#include "target/Isa.h"
#include "target/Target.h"

#include <lldb/API/SBDebugger.h>
#include <lldb/API/SBProcess.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strobe::lldb_plugin {

// A number the protocol writes in hex (a register number, a signal, a thread id); nullopt unless
// `text` is nothing but hex digits.
std::optional<unsigned> hexNumber(std::string_view text);

// The value of field `key` in a gdb-remote reply of "key:value;" fields; nullopt without one.
std::optional<std::string_view> replyField(std::string_view reply, std::string_view key);

// For extended register ymmNh (GDB's name for the upper half of AVX's ymmN; LLDB has it by that
// name only from gdbserver): the whole register lldb-server gives instead, and where the half
// starts in it. Nullopt for every other register, which LLDB has by strobe's name.
struct WholeRegister {
  std::string name;
  unsigned offset;
};
std::optional<WholeRegister> wholeRegisterOf(const ExtRegister &reg);

class RemoteRegisters {
public:
  // Learns lldb-server's numbers for `names` and where `ext` lies in a `g` reply (one request
  // per register up to the last one named). Null when the process is not a gdb-remote one or
  // none of `names` is known.
  static std::optional<RemoteRegisters> learn(lldb::SBDebugger debugger, lldb::SBProcess process,
                                              std::span<const std::string> names,
                                              std::span<const ExtRegister> ext);

  // values[i] for every register of `names` the thread's stop reply holds; filled[i] says which.
  void read(uint64_t tid, std::vector<uint64_t> &values, std::vector<bool> &filled);
  // The same from a stop reply at hand ("T<signal>key:value;...", up to an optional '#').
  void fill(std::string_view reply, std::vector<uint64_t> &values, std::vector<bool> &filled) const;
  // The `ext` registers as an ExtendedSnapshot, 0 for one lldb-server does not have (named in
  // `absent`); false when it has none of them or the read fails.
  bool readExtended(uint64_t tid, ExtendedSnapshot &out);

private:
  explicit RemoteRegisters(lldb::SBDebugger debugger) : debugger_(debugger) {}
  // The reply to `packet`, or empty.
  std::string request(const std::string &packet);

  // Where one `ext` register lies in the `g` reply's register file image.
  struct FileField {
    size_t offset = 0; // bytes
    size_t bytes = 0;  // as lldb-server holds it (fctrl: 2, xmm0: 16)
    size_t slot = 0;   // first 64-bit slot in ExtendedSnapshot::values
    bool known = false;
  };

  lldb::SBDebugger debugger_;
  std::map<unsigned, unsigned> slotOf_; // lldb-server register number -> index in `names`
  std::span<const ExtRegister> ext_;
  std::vector<FileField> extFields_; // in `ext_` order
  size_t extSlots_ = 0;
  std::string command_; // reused buffer
};

} // namespace strobe::lldb_plugin
