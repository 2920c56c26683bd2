// The Target port: the only way the engine touches a debugger. lldb-plugin/ and gdb-ext/ each
// implement it once; tests implement it with a fake.
#pragma once

#include "target/Isa.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strobe {

struct ThreadSnapshot {
  uint64_t tid = 0;
  // In registerTable(isa).regs order; a register the debugger lacks reads as 0, except x86-64
  // orig_rax, which reads as ~0 (not in a system call) when it cannot be known.
  std::vector<uint64_t> regs;
  std::vector<uint64_t> stack; // stack[0] = pc, stack[1] = caller's return address, ...
};

// Registers of the table's `ext` list (Isa.h), read only when a step trace asks for them.
struct ExtendedSnapshot {
  std::vector<uint64_t> values; // ext registers in order; a 16-byte register takes two (low first)
  std::vector<std::string> absent; // those the target does not have (in `values` as 0), in order
};

struct ModuleInfo {
  std::string path;
  std::string buildId; // hex, empty when unknown
  uint64_t start = 0;  // lowest mapped address
  uint64_t end = 0;    // one past the highest mapped address
  uint64_t bias = 0;   // load address - link-time address
};

struct SymbolInfo {
  std::string function; // empty when nothing covers the address
  uint64_t start = 0;   // function entry (runtime address); 0 when unknown
  uint64_t size = 0;    // 0 when unknown
  std::string file;     // source file, empty without line info
  uint32_t line = 0;
  std::vector<std::string> inlined; // innermost first, when debug info records inlining
};

// Where a global or static variable lives in the inferior.
struct DataLocation {
  uint64_t address = 0; // runtime address
  uint64_t size = 0;    // bytes; 0 when unknown (an address given as `*ADDRESS`)
};

// Why the inferior stopped, as the front-end saw it.
struct StopEvent {
  // Step: a stepInstruction() completed normally (the thread executed one instruction).
  // Exec: the process executed a new program (execve); the debugger now holds that program's
  // modules and symbols, and `description` is its path.
  // Delivering: a stepInstruction() met a signal the debugger passes to the program without
  // stopping (`signo`) before the instruction ran; the next one delivers it, into its handler.
  enum class Kind { Signal, Breakpoint, Exited, Step, Exec, Delivering, Other } kind = Kind::Other;
  uint64_t tid = 0;
  int signo = 0;           // Kind::Signal
  int exitCode = 0;        // Kind::Exited (negative: killed by signal -exitCode)
  std::string description; // the debugger's own words for the stop
};

// Resume: strobe's own sample stop, continue at once. StopQuietly: strobe's own stop that ends a
// blocking capture; the inferior stays stopped and the debugger's stop text is not shown.
// HandToUser: anything strobe did not cause; it reaches the user exactly as without strobe.
enum class Verdict { Resume, StopQuietly, HandToUser };

// Owned by the engine while sampling is armed; its destructor undoes every setting the front-end
// changed (signal handling, catchpoints, hooks, threads). `keepSignalSilent` asks the destructor to
// leave the sample signal silently discarded because one may still be pending in the kernel.
class Arming {
public:
  virtual ~Arming() = default;
  virtual void keepSignalSilent() = 0;
  // Whether a sample stop of one thread leaves the others running: the front-end takes it before
  // the debugger would stop them all (GDB's waitpid(), strobe's library in lldb-server). The
  // engine then signals every thread each period and samples each stopped one alone; otherwise
  // it signals the process, and the stop, which halts every thread, samples them all.
  virtual bool stopsOneThread() const { return false; }
};

// Held by the Stepper while it steps one thread (Target::beginStepping()); its destructor ends
// whatever the front-end keeps to itself meanwhile. Ending it must leave the thread where the last
// step did, which a front-end may manage only where it knows beforehand that the Stepper may stop
// (LLDB's step that carries steps kept from it takes one more of its own where they end at the pc
// it began at): it is told of the stops the Stepper plans, and asked before one it chooses.
class SteppingScope {
public:
  virtual ~SteppingScope() = default;
  // The Stepper stops after the next step, wherever it lands (its count runs out).
  virtual void lastStepNext() {}
  // The next step makes a system call that may replace the program (execve): a debugger that
  // would follow the exec inside that step and run the new program on must stop there.
  virtual void execMayFollow() {}
  // Whether the Stepper may stop at this step's stop for a reason of its own (its time limit).
  // False: ending here would move the thread on; the Stepper records another step first.
  virtual bool mayStopHere() const { return true; }
};

class Session;

// A breakpoint strobe owns. Its destructor removes it from the inferior (and is safe to run inside
// a BreakpointHandler, or after the process has gone).
class Breakpoint {
public:
  virtual ~Breakpoint() = default;
  // False once a debugger command has deleted it behind strobe's back: LLDB's `breakpoint delete`
  // reaches even breakpoints whose name forbids deleting them. GDB's internal breakpoints are out
  // of its user's reach, hence the default.
  virtual bool present() const { return true; }
};

// Runs on the debugger's thread while the inferior is stopped at the breakpoint; `tid` is the
// thread that hit it and is the current thread, so the handler may call readThread / readMemory.
// The inferior then continues as if the breakpoint were not there: the front-end steps over it and
// resumes without showing the stop. A user breakpoint at the same address still stops for the user.
using BreakpointHandler = std::function<void(uint64_t tid)>;

// Thrown by a Target's call when the user interrupted the command (Ctrl-C). Long loops of the
// engine catch it and end there, keeping what they took; elsewhere it fails the command.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

class Target {
public:
  virtual ~Target() = default;

  // --- inspection (called only while the inferior is stopped) ---
  virtual bool hasProcess() = 0;
  virtual Isa isa() = 0;
  virtual int pid() = 0;
  // The host that runs the debugger can see and signal the inferior (local or localhost remote).
  virtual bool isHostProcess() = 0;
  // The program runs under a user-mode emulator on this host (qemu-user's gdbstub): pid() is the
  // emulator's (see HostProcess.h).
  virtual bool isEmulated() = 0;
  virtual std::vector<uint64_t> threads() = 0;
  virtual bool readThread(uint64_t tid, unsigned stackDepth, ThreadSnapshot &out) = 0;
  virtual std::vector<ModuleInfo> modules() = 0;
  virtual SymbolInfo symbolize(uint64_t pc) = 0;
  virtual std::vector<uint8_t> readMemory(uint64_t addr, size_t size) = 0;
  // The thread the user has selected (what `stepi` would step).
  virtual uint64_t currentThread() = 0;
  // The registers of registerTable(isa()).ext for one thread; false when they cannot be read.
  virtual bool readExtended(uint64_t tid, ExtendedSnapshot &out) = 0;
  // Runtime addresses a location names: a function name (every module's definition of it, exact
  // symbol name, e.g. "malloc" or "_Znwm"), FILE:LINE (each address the line starts at), or an
  // address written `*0x401000`. Empty when nothing matches.
  virtual std::vector<uint64_t> resolve(std::string_view location) = 0;
  // Where the global or static variable of this exact name lives (when several modules or files
  // define one, a global definition before a file-local one), or the address `*0x601040` names.
  // nullopt when nothing matches; thread-local variables never do.
  virtual std::optional<DataLocation> dataAddress(std::string_view name) = 0;

  // --- control ---
  // Make the debugger stop silently on `signo` (never passing it to the inferior) and report every
  // stop while armed to session.onStop(); stops the session hands back reach the user as usual.
  // With `signo` 0 nothing is silenced: stops (an exit, a crash) are only reported.
  // onStop() may destroy the returned Arming before it returns (a capture ends at the user's
  // breakpoint, a crash or an exit), so its destructor must be safe inside the stop callback.
  virtual std::unique_ptr<Arming> arm(Session &session, int signo) = 0;
  // Resume and return once the inferior stops in a way the session hands to the user (or exits).
  virtual StopEvent runUntilUserStop() = 0;
  // Resume and return at once; the user keeps the prompt.
  virtual void resumeInBackground() = 0;
  virtual bool isRunning() = 0;
  // Executes exactly one instruction of `tid` while every other thread stays stopped. Returns
  // Kind::Step when it did; anything else (a signal, an exit, a user breakpoint) is returned as it
  // happened and is the user's.
  virtual StopEvent stepInstruction(uint64_t tid) = 0;
  // Runs `tid` alone, every other thread stopped, until its pc reaches `address` (the instruction
  // there not yet run): Kind::Step when the run ended without a stop of its own (the caller
  // checks the pc); anything else is the user's, as from stepInstruction(). For what single
  // steps cannot get through (a clock read that retries).
  virtual StopEvent runTo(uint64_t tid, uint64_t address) = 0;
  // stepInstruction() calls on `tid` follow, with reads of that thread and of memory between
  // them, until the returned scope goes: a front-end may keep the steps from the debugger
  // meanwhile (LLDB steps inside lldb-server). The Stepper stops after a step that lands at one
  // of `until`. Null: nothing is kept.
  virtual std::unique_ptr<SteppingScope> beginStepping(uint64_t tid,
                                                       const std::set<uint64_t> &until) {
    (void)tid;
    (void)until;
    return nullptr;
  }
  // Inserts a breakpoint whose hits run `handler` and never reach the user (see BreakpointHandler).
  // Null when the address cannot take a breakpoint.
  virtual std::unique_ptr<Breakpoint> insertBreakpoint(uint64_t address,
                                                       BreakpointHandler handler) = 0;

  // Text for the user's console (asynchronous output where the debugger has it).
  virtual void print(std::string_view text) = 0;
};

} // namespace strobe
