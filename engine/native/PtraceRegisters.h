// Registers of a thread this process traces, read with ptrace: GDB's front-end reads the threads of
// a process GDB traces from the thread strobe runs on (GDB's main thread); LLDB's gets a stopped
// thread's registers from lldb-server, which traces it, as the kernel's NT_PRSTATUS block. The
// reads fail, and the caller asks the debugger instead, for a thread this process does not trace
// (gdbserver's, a thread still running) or an ISA other than the host's.
#pragma once

#include "target/Isa.h"

#include <cstdint>
#include <span>
#include <vector>

namespace strobe {

// registerTable(isa).regs, in its order, from the NT_PRSTATUS register set of a thread of this
// host (PTRACE_GETREGSET); false when `prstatus` is not that set's size for `isa`.
bool registersFromPrStatus(Isa isa, std::span<const uint8_t> prstatus, std::vector<uint64_t> &regs);

// registerTable(isa).regs, in its order.
bool ptraceRegisters(Isa isa, uint64_t tid, std::vector<uint64_t> &regs);
// registerTable(isa).ext, in its order (a 16-byte register as two slots, low half first).
bool ptraceExtended(Isa isa, uint64_t tid, std::vector<uint64_t> &values);
// The same from a thread's NT_PRSTATUS register set and its readExtendedRegsets() block
// (ExtendedRegsets.h); false when they are too short for `isa` on this host.
bool extendedFromRegsets(Isa isa, std::span<const uint8_t> prstatus,
                         std::span<const uint8_t> extended, std::vector<uint64_t> &values);

} // namespace strobe
