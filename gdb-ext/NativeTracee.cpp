#include "NativeTracee.h"

#include "native/PtraceRegisters.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace strobe::gdb {
namespace {

constexpr size_t kMaxInstruction = 16;

// A signal that stopped the step before the instruction ran, given back to the thread so that
// GDB receives it as if strobe had never stepped: a fault recurs by itself when GDB runs the
// instruction again; anything else is queued anew, with its siginfo where the kernel allows.
void requeue(int pid, uint64_t tid, int signo, const siginfo_t &info) {
  bool fault = info.si_code > 0 && (signo == SIGSEGV || signo == SIGBUS || signo == SIGILL ||
                                    signo == SIGFPE || signo == SIGTRAP);
  if (fault)
    return;
  if (info.si_code < 0 && info.si_code != SI_TKILL &&
      syscall(SYS_rt_tgsigqueueinfo, pid, static_cast<pid_t>(tid), signo, &info) == 0)
    return;
  syscall(SYS_tgkill, pid, static_cast<pid_t>(tid), signo);
}

} // namespace

NativeTracee::NativeTracee(Isa isa, int pid) : isa_(isa), stack_(isa, pid), nextPc_(isa) {}

bool NativeTracee::readThread(uint64_t tid, unsigned depth, ThreadSnapshot &out) {
  if (!ptraceRegisters(isa_, tid, out.regs))
    return false;
  out.tid = tid;
  return stack_.walk(out.regs, depth, out.stack);
}

bool NativeTracee::readExtended(uint64_t tid, ExtendedSnapshot &out) {
  return ptraceExtended(isa_, tid, out.values);
}

NativeTracee::Step NativeTracee::step(uint64_t tid, const std::unordered_set<uint64_t> &avoid,
                                      int &exitCode) {
  if (!ptraceRegisters(isa_, tid, regs_))
    return Step::LeftToGdb;
  uint64_t pc = regs_[registerTable(isa_).pc];
  // Leaving a breakpoint's address is GDB's to do too: it steps over its own breakpoint there
  // (in memory, or in a debug register that would trap before the instruction runs).
  if (avoid.count(pc))
    return Step::LeftToGdb;
  std::array<uint8_t, kMaxInstruction> code{};
  const size_t size = readProcessMemoryPrefix(pid(), pc, code.data(), kMaxInstruction);
  if (size == 0)
    return Step::LeftToGdb;
  auto next =
      nextPc_.candidates(std::span<const uint8_t>(code.data(), size), pc, regs_, stack_.read());
  if (!next)
    return Step::LeftToGdb;
  for (uint64_t address : *next)
    if (avoid.count(address))
      return Step::LeftToGdb;

  auto thread = static_cast<pid_t>(tid);
  if (ptrace(PTRACE_SINGLESTEP, thread, nullptr, nullptr) != 0)
    return Step::LeftToGdb;
  int status = 0;
  while (waitpid(thread, &status, __WALL) < 0)
    if (errno != EINTR)
      return Step::Vanished;
  if (!WIFSTOPPED(status)) {
    exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return Step::Vanished;
  }
  if (status >> 16 != 0) // a ptrace event: only a dying thread reports one here
    return Step::Vanished;
  siginfo_t info{};
  ptrace(PTRACE_GETSIGINFO, thread, nullptr, &info);
  int signo = WSTOPSIG(status);
  if (signo == SIGTRAP && info.si_code == TRAP_TRACE) // the trap after one instruction
    return Step::Done;
  if (signo == SIGTRAP && info.si_code > 0) {
    // Another debug trap came with the step: it is the step's only if the instruction ran.
    std::vector<uint64_t> now;
    bool moved = ptraceRegisters(isa_, tid, now) && now[registerTable(isa_).pc] != pc;
    return moved ? Step::Done : Step::LeftToGdb;
  }
  requeue(pid(), tid, signo, info);
  return Step::LeftToGdb;
}

} // namespace strobe::gdb
