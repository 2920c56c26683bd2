// Sample stops taken inside GDB's wait for the inferior, which GDB then never sees.
//
// Why: with the sample signal caught silently (a catchpoint whose condition samples and resumes),
// GDB still handles every sample stop as an event: it stops the other threads, runs its stop
// machinery and the condition's Python, and resumes, 30-100 us on this project's VMs before
// strobe reads a register (bench/RESULTS.md). GDB learns of a native inferior's stops from
// waitpid() and resumes it with ptrace(), both called through its executable's PLT, on its main
// thread, where strobe runs; that thread is the inferior's tracer. So while armed, GDB's two
// calls go through this tap: a sample stop of a thread of the armed process that GDB last resumed
// with PTRACE_CONT is offered to `take`, which samples it (PTRACE_GETREGS, the stack by strobe's
// unwinder); a stop it takes is resumed here, as GDB would (the signal not passed on), and
// waitpid() looks again, the other threads running all along (the engine samples the thread
// alone: Arming::stopsOneThread()). Every other stop, and every stop while disarmed, reaches GDB
// unchanged: a stop GDB made by stepping, one the engine declines (the capture ends at it, the
// engine symbolizes).
//
// Patched once, for GDB's life: a patched call costs one comparison while disarmed.
#pragma once

#include <cstdint>
#include <functional>

namespace strobe::gdb {

class WaitTap {
public:
  // Runs inside GDB's waitpid() for a sample stop of thread `tid`; returns whether it took it.
  using Take = std::function<bool(uint64_t tid)>;

  // Arms the tap for a scope: stops of `signo` of process `pid` go to `take`. Does nothing when
  // GDB's executable makes no patchable call to waitpid() and ptrace() (armed() says).
  class Armed {
  public:
    Armed(int pid, int signo, Take take);
    ~Armed();
    Armed(const Armed &) = delete;
    Armed &operator=(const Armed &) = delete;
    bool armed() const { return armed_; }

  private:
    bool armed_ = false;
  };
};

} // namespace strobe::gdb
