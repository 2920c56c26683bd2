// The engine's Target port over strobe_gdb.target.GdbTarget (Python, GDB's API). Each port call
// goes to the Python method of the same job, except where GDB's own thread can do it directly
// for a process GDB traces (NativeTracee): registers, the caller, extended registers, single
// steps and symbol lookup, each falling back to Python whenever the direct way cannot answer.
// Through gdbserver a step trace's steps and registers take the stub's packets (RemoteTracee).
//
// The protocol the Python object implements, one method per port call:
//   has_process() -> bool            isa() -> architecture name
//   identity() -> (pid, tid, program) as GDB names them (tid: the selected thread's, 0 without
//                 one; program: the executable's path, "" without one); PyTarget finds the host
//                 process behind them (HostProcess.h)
//   threads() -> [tid]               current_thread() -> tid
//   read_thread(tid, depth) -> ([register], [pc, caller, ...]) or None when unreadable
//   read_extended(tid) -> ([slot], [name of a register the target lacks]) or None
//   modules() -> [(path, build_id, start, end, bias)]
//   symbolize(pc) -> (function, start, size, file, line, [inlined, innermost first]); size 0
//                    and the symbol's linkage name for a function without debug information
//   read_memory(addr, size) -> bytes             resolve(location) -> [address]
//   data_address(name) -> (address, size) or None
//   arm(on_stop, signo) -> an object with close() and keep_signal_silent()
//   run_until_user_stop() -> (StopKind, tid, signo, exit_code, description)
//   begin_stepping(tid) -> an object with close() and exec_may_follow() (SteppingScope)
//   step_instruction(tid) -> (StopKind, tid, signo, exit_code, description)
//   run_to(tid, address) -> (StopKind, tid, signo, exit_code, description)
//   insert_breakpoint(address, handler) -> an object with delete(), or None
//   resume_in_background()           is_running() -> bool          print(text)
// and, for the direct paths:
//   native_step_guard() -> None (step through GDB) or a frozenset of addresses a direct step
//                          must not arrive at (every breakpoint location)
//   refresh_registers(tid) -> GDB drops its register and memory caches after direct steps (and
//                          reads thread `tid`'s registers anew, when not 0)
//   remote_layout() -> None, or (thread prefix, [(offset, size)] of the registers,
//                      [(offset, size)] of the extended ones) in gdbserver's register block
//   packet(text) -> the stub's reply, or None        (`maint packet`)
//   remote_signal(tid, signo) -> a stop tuple, or None for GDB to step the thread: a signal
//                      stopped a step made with packets, which GDB has not seen
//
// Every call reaches the engine from GDB's thread with the GIL held (a command, or a stop GDB is
// handling), and the engine's timer thread never calls the port; the GIL is still taken in each
// forwarder so that the trampoline is correct on its own. The one exception is a stop taken inside
// GDB's waitpid() (WaitTap), perhaps without the GIL: the engine then calls only threads() and
// readThread(), which answer from what the tap read, without Python.
#pragma once

#include "NativeTracee.h"
#include "RemoteTracee.h"
#include "command/RoutineSample.h"
#include "target/HostProcess.h"
#include "target/Target.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>

namespace strobe::gdb {

class PyTarget final : public Target {
public:
  // `direct`: use the direct paths where they apply (off to compare them with GDB's answers).
  explicit PyTarget(pybind11::object impl, bool direct = true);

  bool hasProcess() override;
  Isa isa() override;
  int pid() override;
  bool isHostProcess() override;
  bool isEmulated() override;
  std::vector<uint64_t> threads() override;
  bool readThread(uint64_t tid, unsigned stackDepth, ThreadSnapshot &out) override;
  std::vector<ModuleInfo> modules() override;
  SymbolInfo symbolize(uint64_t pc) override;
  std::vector<uint8_t> readMemory(uint64_t addr, size_t size) override;
  uint64_t currentThread() override;
  bool readExtended(uint64_t tid, ExtendedSnapshot &out) override;
  std::vector<uint64_t> resolve(std::string_view location) override;
  std::optional<DataLocation> dataAddress(std::string_view name) override;
  std::unique_ptr<Arming> arm(Session &session, int signo) override;
  StopEvent runUntilUserStop() override;
  void resumeInBackground() override;
  bool isRunning() override;
  std::unique_ptr<SteppingScope> beginStepping(uint64_t tid,
                                               const std::set<uint64_t> &until) override;
  StopEvent stepInstruction(uint64_t tid) override;
  StopEvent runTo(uint64_t tid, uint64_t address) override;
  std::unique_ptr<Breakpoint> insertBreakpoint(uint64_t address,
                                               BreakpointHandler handler) override;
  void print(std::string_view text) override;

  // Makes GDB's view of the inferior current again after direct steps; called before anything
  // reaches GDB (a Python port call that reads the inferior, the end of a command).
  void syncGdb();
  // Drops what the direct paths know of the process (its modules changed, it exited).
  void forgetProcess() {
    native_.reset();
    remote_.reset();
  }

private:
  NativeTracee *native();
  // The addresses a direct step must not arrive at, or null when only GDB may step.
  const std::unordered_set<uint64_t> *stepGuard();
  // The stepper of a process behind gdbserver, for a step trace; null for any other target.
  std::unique_ptr<RemoteTracee> remoteTracee();
  // The remote tracee, if a trace through gdbserver is under way, about to send packets for
  // thread `tid` (GDB will make it gdbserver's current thread again: syncGdb).
  RemoteTracee *remoteFor(uint64_t tid);
  // A step of a remote thread with packets, or of a thread GDB traces itself with ptrace;
  // nullopt when GDB is to make it.
  std::optional<StopEvent> stepRemotely(uint64_t tid);
  std::optional<StopEvent> stepNatively(uint64_t tid);
  // WaitTap's Take: the sample of a stop GDB has not seen, if the engine takes it as a routine one.
  bool takeUnseenStop(Session &session, uint64_t tid, int signo);
  const std::optional<HostProcess> &hostProcess();
  StopEvent stopEvent(pybind11::handle tuple);
  // A method of the Python port; the GIL must be held.
  template <typename... Args> pybind11::object invoke(const char *method, Args &&...args);
  // The same, taking the GIL and casting the result.
  template <typename R, typename... Args> R call(const char *method, Args &&...args);

  pybind11::object impl_;
  bool direct_;
  std::unique_ptr<NativeTracee> native_;
  HostProcessLookup hosts_;
  bool gdbStale_ = false;
  std::unique_ptr<RemoteTracee> remote_; // while a step trace through gdbserver is under way
  uint64_t remoteTid_ = 0;               // the thread it stepped since GDB last acted
  pybind11::object guard_;               // the latest native_step_guard() answer, and its addresses
  std::unordered_set<uint64_t> avoid_;   // with until_
  // The step trace under way (beginStepping): where it stops, whether GDB makes its next step,
  // and whether direct steps have moved the thread since GDB's own last stop of it.
  std::set<uint64_t> until_;
  bool gdbStepsNext_ = false;
  bool movedBehindGdb_ = false;
  RoutineSample routine_; // a stop taken inside GDB's wait (WaitTap)
};

} // namespace strobe::gdb
