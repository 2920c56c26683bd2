// The Linux system calls a step trace treats apart, by ISA: the ones that replace the program or
// unmap code, and the ones that make a process or a thread, or end one. A trace names what it
// recorded before code can go from its addresses, and a debugger's step of the others is the
// debugger's business (LLDB: see lldb-plugin/LldbTarget.cpp).
#pragma once

#include "target/Isa.h"

#include <cstdint>

namespace strobe {

// The call's number is in registerTable(isa).systemCallNumber.
// execve, execveat.
bool replacesProgram(Isa isa, uint64_t number);
// munmap (dlclose unmaps a library with it).
bool unmapsMemory(Isa isa, uint64_t number);
// fork, vfork, clone, clone3 (a thread or a process: their flags tell which).
bool makesTask(Isa isa, uint64_t number);
// exit, exit_group.
bool endsTask(Isa isa, uint64_t number);

// The calls whose flags make a thread and not a process: clone (flags in its first argument) and
// clone3 (the first word of the struct its first argument points to).
bool isClone(Isa isa, uint64_t number);
bool isClone3(Isa isa, uint64_t number);
inline constexpr uint64_t kCloneThread = 0x10000; // CLONE_THREAD

} // namespace strobe
