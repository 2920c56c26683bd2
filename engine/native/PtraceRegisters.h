// Registers of a thread read with ptrace, for a process GDB traces from the thread strobe runs on
// (GDB's main thread). They fail, and the caller asks GDB instead, for a thread this process does
// not trace (gdbserver's, a thread still running) or an ISA other than the host's.
#pragma once

#include "target/Isa.h"

#include <cstdint>
#include <vector>

namespace strobe::gdb {

// registerTable(isa).regs, in its order.
bool ptraceRegisters(Isa isa, uint64_t tid, std::vector<uint64_t> &regs);
// registerTable(isa).ext, in its order (a 16-byte register as two slots, low half first).
bool ptraceExtended(Isa isa, uint64_t tid, std::vector<uint64_t> &values);

} // namespace strobe::gdb
