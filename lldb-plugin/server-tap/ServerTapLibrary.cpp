// strobe's library inside lldb-server: sample stops taken in lldb-server's wait for the inferior,
// which lldb-server, and so LLDB, then never learns of.
//
// Why: a signal LLDB is told not to stop for still costs it a whole round. lldb-server stops every
// other thread (all-stop), reads the stopped one and sends its stop reply; LLDB's threads decide
// and resume. That is 150-230 us of a sample stop of one thread, and milliseconds for a process of
// several busy threads (bench/RESULTS.md), before strobe has read a register. lldb-server is the
// inferior's tracer: the one process that may read its registers, and the one whose waitpid()
// learns of every stop. strobe-lldb-server, which the plugin names to LLDB as its debug server,
// preloads this library into it. While the plugin has armed the channel (TapChannel.h), a stop of
// the armed signal of a thread lldb-server last resumed with PTRACE_CONT is posted to the plugin
// with the thread's registers; the plugin samples it while the thread is still stopped (its stack
// unwound through the process's memory) and answers. A stop it takes is resumed here as LLDB
// resumes a signal it neither stops for nor passes, and waitpid() looks again; every other stop,
// and every stop while nothing is armed, reaches lldb-server unchanged.
//
// `strobe step` uses the same page: while the plugin names a thread (steppedTid), the stop that
// ends a single step lldb-server made of it is posted with the thread's registers, and the plugin
// records the instruction and has the thread stepped again here, or lets lldb-server have the
// stop, which then sees its one step end where the last one did. LLDB's own step costs about
// 0.7 ms (its thread plan, and per stop a round of packets); this one the price of a ptrace step.
// While the plugin traces a thread (tracedTid), a step of it that enters a signal handler ends at
// the handler's entry, for the plugin or for lldb-server (atHandlerEntry).
#include "TapChannel.h"
#include "native/ExtendedRegsets.h"
#include "native/ResumeLog.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <csignal>
#include <cstdarg>
#include <cstdlib>
#include <new>

namespace strobe::lldb_plugin {
namespace {

// How long a posted stop waits for the plugin to claim it (the plugin's thread wakes in tens of
// microseconds; longer, and LLDB is busy or gone), and then for its answer. A step's stop waits
// as long for either: the plugin is stepping and waits for it, and a stop it missed would end
// the run where LLDB's step may go on by itself, unrecorded (at the pc the step began at).
constexpr uint64_t kClaimWaitNs = 20'000'000;
constexpr uint64_t kAnswerWaitNs = 2'000'000'000;

// glibc's ptrace() is variadic; lldb-server passes all four arguments.
using PtraceFunction = long (*)(int, pid_t, void *, void *);
PtraceFunction realPtrace = nullptr;
TapChannel *channel = nullptr; // null when the page could not be made: every call passes through

ResumeLog resumes;

uint64_t monotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(now.tv_nsec);
}

// Waits, at most until `deadline`, while the state is `value`; the state then.
uint32_t awaitChange(TapChannel &c, uint32_t value, uint64_t deadline) {
  uint32_t state;
  for (uint64_t now = monotonicNs();
       (state = c.state.load(std::memory_order_acquire)) == value && now < deadline;
       now = monotonicNs())
    waitWhile(c.state, value, deadline - now);
  return state;
}

// Reads register set `type` of `tid` into `to`; its size, or 0.
uint32_t readRegset(pid_t tid, uintptr_t type, uint8_t *to, size_t room) {
  iovec io{to, room};
  if (realPtrace(PTRACE_GETREGSET, tid, reinterpret_cast<void *>(type), &io) != 0)
    return 0;
  return static_cast<uint32_t>(io.iov_len);
}

// The plugin's answer for the stop of `tid`; false also when it does not answer in time.
bool answered(TapChannel &c, pid_t tid, TapChannel::Kind kind) {
  c.registersSize = readRegset(tid, NT_PRSTATUS, c.registers, sizeof c.registers);
  c.extendedSize = 0;
  if (kind == TapChannel::StepStop)
    c.extendedSize = static_cast<uint32_t>(readExtendedRegsets(
        [tid](unsigned type, uint8_t *to, size_t room) { return readRegset(tid, type, to, room); },
        c.extended));
  if (c.registersSize == 0 || (kind == TapChannel::StepStop && c.extendedSize == 0))
    return false;
  c.kind = kind;
  c.tid = tid;
  c.state.store(TapChannel::Posted, std::memory_order_release);
  wakeAll(c.state);
  const uint64_t posted = monotonicNs();
  uint32_t expected = TapChannel::Posted;
  const uint64_t claimWait = kind == TapChannel::StepStop ? kAnswerWaitNs : kClaimWaitNs;
  if (awaitChange(c, TapChannel::Posted, posted + claimWait) == TapChannel::Posted &&
      c.state.compare_exchange_strong(expected, TapChannel::Idle))
    return false; // nobody claimed it
  expected = TapChannel::Taking;
  if (awaitChange(c, TapChannel::Taking, posted + kAnswerWaitNs) == TapChannel::Taking &&
      c.state.compare_exchange_strong(expected, TapChannel::Idle))
    return false; // claimed, never answered: the plugin's late answer finds Idle and is dropped
  const bool taken = c.state.load(std::memory_order_acquire) == TapChannel::Taken;
  c.state.store(TapChannel::Idle, std::memory_order_release);
  return taken;
}

// Whether the stop `status` of `tid` is a sample stop the plugin took; the thread then runs again.
bool taken(pid_t tid, int status) {
  TapChannel *c = channel;
  if (!c || !WIFSTOPPED(status) || (status >> 16) != 0 ||
      c->armedPid.load(std::memory_order_acquire) == 0 ||
      WSTOPSIG(status) != c->signo.load(std::memory_order_relaxed) ||
      c->state.load(std::memory_order_acquire) != TapChannel::Idle || !resumes.continued(tid) ||
      !answered(*c, tid, TapChannel::SampleStop))
    return false;
  // Should the thread have died meanwhile, the next waitpid() reports it.
  realPtrace(PTRACE_CONT, tid, nullptr, nullptr);
  return true;
}

// The traced thread whose stop lldb-server is told ended its step (TRAP_TRACE) though the kernel
// reported it as a step that entered a signal handler (TRAP_UNK, before the handler's first
// instruction); 0: none. lldb-server takes that report for noise and steps on, so the trace
// would lose the handler's first instruction. Set until waitpid() reports the thread again.
std::atomic<pid_t> atHandlerEntry{0};

// Whether a SIGTRAP after a single step ends a step over a system call instruction: x86-64
// reports one as a breakpoint trap when the call returns (the kernel's user_single_step_report);
// an int3 there is SI_KERNEL.
bool steppedOverSystemCall(const siginfo_t &info) {
#if defined(__x86_64__)
  return info.si_code == TRAP_BRKPT;
#else
  (void)info;
  return false;
#endif
}

// Whether the stop `status` of `tid` ends a single step the plugin took; the thread then makes
// another, whose stop a later waitpid() reports. Only the trap of a completed step (TRAP_TRACE, a
// step over a system call, or the entry of a signal handler): a signal, an int3 trap or an event
// goes to lldb-server as the end of its step. (A watchpoint that fires during the step reports
// TRAP_TRACE too: the plugin does not step this way then.)
bool steppedAgain(pid_t tid, int status) {
  TapChannel *c = channel;
  if (!c || !WIFSTOPPED(status) || (status >> 16) != 0 || WSTOPSIG(status) != SIGTRAP ||
      c->tracedTid.load(std::memory_order_acquire) != tid || !resumes.singleStepped(tid))
    return false;
  siginfo_t info{};
  if (realPtrace(PTRACE_GETSIGINFO, tid, nullptr, &info) != 0)
    return false;
  if (info.si_code == TRAP_UNK)
    atHandlerEntry.store(tid, std::memory_order_release);
  else if (info.si_code != TRAP_TRACE && !steppedOverSystemCall(info))
    return false;
  if (c->steppedTid.load(std::memory_order_acquire) != tid ||
      c->state.load(std::memory_order_acquire) != TapChannel::Idle ||
      !answered(*c, tid, TapChannel::StepStop))
    return false;
  atHandlerEntry.store(0, std::memory_order_release);
  realPtrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr);
  return true;
}

__attribute__((constructor)) void setUp() {
  // strobe-lldb-server preloaded this library: the programs lldb-server starts must not inherit
  // it, so lldb-server's environment gets back what it had.
  if (const char *saved = std::getenv("STROBE_SAVED_LD_PRELOAD")) {
    if (*saved)
      setenv("LD_PRELOAD", saved, 1);
    else
      unsetenv("LD_PRELOAD");
    unsetenv("STROBE_SAVED_LD_PRELOAD");
  }
  realPtrace = reinterpret_cast<PtraceFunction>(dlsym(RTLD_NEXT, "ptrace"));
  // Close-on-exec: the program lldb-server starts must not hold it either. The descriptor stays
  // open for lldb-server's life, for the plugin to find.
  int fd = memfd_create(kTapChannelName, MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, sizeof(TapChannel)) != 0)
    return;
  void *page = mmap(nullptr, sizeof(TapChannel), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED)
    return;
  channel = new (page) TapChannel{};
  channel->version.store(kTapChannelVersion, std::memory_order_release);
}

} // namespace
} // namespace strobe::lldb_plugin

using namespace strobe::lldb_plugin;

extern "C" __attribute__((visibility("default"))) pid_t waitpid(pid_t pid, int *status,
                                                                int options) {
  int own = 0;
  int *where = status ? status : &own;
  for (;;) {
    pid_t reported = wait4(pid, where, options, nullptr);
    if (reported <= 0)
      return reported;
    if (WIFEXITED(*where) || WIFSIGNALED(*where))
      resumes.forget(reported);
    pid_t expected = reported;
    atHandlerEntry.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
    if (!taken(reported, *where) && !steppedAgain(reported, *where))
      return reported;
  }
}

extern "C" __attribute__((visibility("default"))) long ptrace(enum __ptrace_request request,
                                                              ...) noexcept {
  va_list arguments;
  va_start(arguments, request);
  pid_t pid = va_arg(arguments, pid_t);
  void *address = va_arg(arguments, void *);
  void *data = va_arg(arguments, void *);
  va_end(arguments);
  resumes.note(request, pid);
  const long result = realPtrace(request, pid, address, data);
  if (request == PTRACE_GETSIGINFO && result == 0 &&
      pid == atHandlerEntry.load(std::memory_order_acquire))
    static_cast<siginfo_t *>(data)->si_code = TRAP_TRACE;
  return result;
}
