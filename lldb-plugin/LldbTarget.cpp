#include "LldbTarget.h"

#include "BackgroundSampler.h"
#include "Locations.h"
#include "ServerTap.h"
#include "StopReplyTap.h"
#include "capture/ProcFile.h"
#include "command/Session.h"
#include "isa/StepLanding.h"
#include "native/PtraceRegisters.h"
#include "target/Demangle.h"
#include "target/GdbSignals.h"
#include "target/SystemCalls.h"

#include <lldb/API/SBAddress.h>
#include <lldb/API/SBBlock.h>
#include <lldb/API/SBCommandInterpreter.h>
#include <lldb/API/SBData.h>
#include <lldb/API/SBError.h>
#include <lldb/API/SBFile.h>
#include <lldb/API/SBFileSpec.h>
#include <lldb/API/SBFrame.h>
#include <lldb/API/SBFunction.h>
#include <lldb/API/SBLineEntry.h>
#include <lldb/API/SBModule.h>
#include <lldb/API/SBSection.h>
#include <lldb/API/SBStream.h>
#include <lldb/API/SBStringList.h>
#include <lldb/API/SBSymbol.h>
#include <lldb/API/SBSymbolContext.h>
#include <lldb/API/SBThread.h>
#include <lldb/API/SBUnixSignals.h>
#include <lldb/API/SBValue.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <memory>
#include <signal.h>
#include <stdexcept>
#include <string_view>
#include <sys/ioctl.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace strobe::lldb_plugin {
namespace {

// A function known only from a symbol table, named as the GDB front-end names it
// (target/Demangle.h): a .plt entry (LLDB's trampoline symbol) NAME@plt. A capture must not depend
// on the debugger that took it.
std::string symbolName(lldb::SBSymbol &symbol) {
  const char *linkage = symbol.GetMangledName();
  if (!linkage)
    linkage = symbol.GetName();
  std::string name = linkage ? linkage : "";
  if (symbol.GetType() == lldb::eSymbolTypeTrampoline)
    name += "@plt";
  return demangledName(name);
}

// LLDB launched `pid` on a terminal whose master end this very process holds: LLDB then runs a
// handler that gives the program the terminal whenever it runs.
bool ownsTerminalOf(int pid) {
  char link[PATH_MAX] = {};
  std::string stdinPath = "/proc/" + std::to_string(pid) + "/fd/0";
  if (::readlink(stdinPath.c_str(), link, sizeof link - 1) <= 0)
    return false;
  unsigned terminal = 0;
  if (std::sscanf(link, "/dev/pts/%u", &terminal) != 1)
    return false;
  DIR *fds = ::opendir("/proc/self/fd");
  if (!fds)
    return false;
  bool owned = false;
  while (dirent *entry = ::readdir(fds)) {
    int fd = std::atoi(entry->d_name);
    unsigned number = 0;
    char target[PATH_MAX] = {};
    std::string fdPath = std::string("/proc/self/fd/") + entry->d_name;
    if (entry->d_name[0] != '.' && ::readlink(fdPath.c_str(), target, sizeof target - 1) > 0 &&
        std::string_view(target) == "/dev/ptmx" && ::ioctl(fd, TIOCGPTN, &number) == 0 &&
        number == terminal)
      owned = true;
  }
  ::closedir(fds);
  return owned;
}

// A thread of the stopped process has `signo` as its stop reason: LLDB passes it to the program
// when it resumes unless the signal is suppressed at that moment.
bool holdsSignal(lldb::SBProcess &process, int signo) {
  for (uint32_t i = 0; i < process.GetNumThreads(); ++i) {
    lldb::SBThread thread = process.GetThreadAtIndex(i);
    if (thread.GetStopReason() == lldb::eStopReasonSignal &&
        static_cast<int>(thread.GetStopReasonDataAtIndex(0)) == signo)
      return true;
  }
  return false;
}

// SB register values default to the data formatters' synthetic and dynamic views, which cost
// more than the register read itself; a raw integer needs neither.
std::optional<uint64_t> registerValue(lldb::SBFrame &frame, const char *name) {
  lldb::SBValue value = frame.FindRegister(name);
  if (!value.IsValid())
    return std::nullopt;
  value.SetPreferSyntheticValue(false);
  value.SetPreferDynamicValue(lldb::eNoDynamicValues);
  lldb::SBError error;
  uint64_t raw = value.GetValueAsUnsigned(error, 0);
  return error.Success() ? std::optional(raw) : std::nullopt;
}

// Makes the debugger synchronous for a scope: SBProcess::Continue() then returns at the next
// stop and keeps that stop from every other listener.
class SynchronousExecution {
public:
  explicit SynchronousExecution(lldb::SBDebugger debugger)
      : debugger_(debugger), wasAsync_(debugger.GetAsync()) {
    if (wasAsync_)
      debugger_.SetAsync(false);
  }
  ~SynchronousExecution() {
    if (wasAsync_)
      debugger_.SetAsync(true);
  }
  SynchronousExecution(const SynchronousExecution &) = delete;
  SynchronousExecution &operator=(const SynchronousExecution &) = delete;

private:
  lldb::SBDebugger debugger_;
  bool wasAsync_;
};

// LLDB stops at an exec unless the user turned that off. strobe's capture of a program ends
// there (the engine hears of the exec only through that stop), so it is on while armed.
class StopOnExec {
public:
  explicit StopOnExec(lldb::SBDebugger debugger) : debugger_(debugger) {
    lldb::SBStringList value =
        lldb::SBDebugger::GetInternalVariableValue(kSetting, debugger_.GetInstanceName());
    turnedOn_ = value.GetSize() == 1 && std::string_view(value.GetStringAtIndex(0)) == "false";
    if (turnedOn_)
      lldb::SBDebugger::SetInternalVariable(kSetting, "true", debugger_.GetInstanceName());
  }
  ~StopOnExec() {
    if (turnedOn_)
      lldb::SBDebugger::SetInternalVariable(kSetting, "false", debugger_.GetInstanceName());
  }
  StopOnExec(const StopOnExec &) = delete;
  StopOnExec &operator=(const StopOnExec &) = delete;

private:
  static constexpr const char *kSetting = "target.process.stop-on-exec";
  lldb::SBDebugger debugger_;
  bool turnedOn_;
};

} // namespace

// The sample signal's handling while armed: stop, without telling the user and without passing
// it to the program. Ending it is left to LldbTarget::settle(): the engine releases the arming
// before its timer has stopped, and a signal sent after the user's `pass` came back would kill
// the program.
class LldbArming : public Arming {
public:
  LldbArming(LldbTarget &target, Session &session, lldb::SBProcess process, int hostSigno)
      : target_(target), stopOnExec_(target.debugger_) {
    // qemu-user's gdbstub numbers signals as GDB does, and LLDB keeps its numbers (SIGPWR is 32
    // there, 30 on the host).
    const bool emulated = target_.isEmulated();
    const int signo = emulated ? gdbSignalFromHost(hostSigno).value_or(hostSigno) : hostSigno;
    lldb::SBUnixSignals signals = process.GetUnixSignals();
    int pid = static_cast<int>(process.GetProcessID());
    // A previous capture may still keep the signal silent for a signal it left pending: what the
    // user had is what that capture saved.
    if (target_.releaseOwed_ && target_.releaseOwed_->pid == pid)
      saved_ = *target_.releaseOwed_;
    else
      saved_ = {signals,
                pid,
                target_.pid(),
                signo,
                hostSigno,
                emulated,
                signals.GetShouldStop(signo),
                signals.GetShouldNotify(signo),
                signals.GetShouldSuppress(signo)};
    target_.releaseOwed_.reset();
    signals.SetShouldStop(signo, true);
    signals.SetShouldNotify(signo, false);
    signals.SetShouldSuppress(signo, true);
    target_.armedSession_ = &session;
    target_.armedSignal_ = signo;
    target_.armedHostSignal_ = hostSigno;
    target_.interceptContinue(true);
    // Where strobe can read the stopped thread's memory itself, sample stops need not be public:
    // strobe's library in lldb-server hands each over before lldb-server reports it (ServerTap);
    // without it, lldb-server's stop reply holds the thread's registers (StopReplyTap).
    const LldbTarget::CaptureSetup &setup = target_.setup_;
    if (hostSigno != 0 && setup.native)
      serverTap_ = ServerTap::arm(target_.pid(), hostSigno,
                                  [this](uint64_t tid, std::span<const uint8_t> registers) {
                                    return target_.takeSampleFromServer(tid, registers);
                                  });
    if (!serverTap_ && hostSigno != 0 && setup.remote && setup.native)
      tap_.emplace(StopReplyTap::of(target_.debugger_), signals, signo,
                   [this](std::string_view reply, uint64_t tid) {
                     return target_.takeSampleFromReply(reply, tid);
                   });
  }

  ~LldbArming() override {
    serverTap_.reset();
    tap_.reset();
    target_.armedSession_ = nullptr;
    target_.syscallFiles_.closeAll(); // the debugger keeps no file of a program it is done sampling
    target_.interceptContinue(false);
    if (BackgroundSampler *background = target_.background_.get()) {
      if (background->onThread())
        background->requestExit();
      else
        background->stop();
    }
    target_.releaseOwed_ = saved_;
  }

  // The engine asks for this when its timer cannot tell whether its last signal is still on its
  // way. settle() looks at the kernel's queue and the threads' stop reasons instead, which tell.
  void keepSignalSilent() override {}

  bool stopsOneThread() const override { return serverTap_ != nullptr; }

private:
  LldbTarget &target_;
  StopOnExec stopOnExec_;
  LldbTarget::SignalHandling saved_;
  std::unique_ptr<ServerTap> serverTap_;   // sample stops taken inside lldb-server
  std::optional<StopReplyTap::Armed> tap_; // else, taken from lldb-server's stop reply
};

LldbTarget::LldbTarget(lldb::SBDebugger debugger)
    : debugger_(debugger),
      hidden_([this](const BreakpointHandler &handler, uint64_t tid) { runHit(handler, tid); }) {}

lldb::SBError LldbTarget::continueProcess(lldb::SBProcess &process) {
  lldb::SBError error;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    error = process.Continue();
    if (error.Success() || process.GetState() != lldb::eStateStopped)
      break;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return error;
}

lldb::SBError LldbTarget::continueSampling(lldb::SBProcess &process, bool holdingSession) {
  StopReplyTap &tap = StopReplyTap::of(debugger_);
  tap.beforeResume();
  sessionParked_ = holdingSession;
  samplingResume_ = true;
  lldb::SBError error = continueProcess(process);
  samplingResume_ = false;
  sessionParked_ = false;
  tap.afterResume();
  return error;
}

LldbTarget::~LldbTarget() = default;

bool LldbTarget::samplingInBackground() const { return background_ && !background_->finished(); }

LldbTarget::CommandScope::CommandScope(LldbTarget &target, lldb::SBCommandReturnObject &result)
    : target_(target), lock_(target.sessionMutex_) {
  if (target_.background_ && target_.background_->finished())
    target_.background_.reset();
  std::lock_guard print(target_.printMutex_);
  target_.commandResult_ = &result;
  target_.commandThread_ = std::this_thread::get_id();
}

LldbTarget::CommandScope::~CommandScope() {
  target_.settle();
  std::lock_guard print(target_.printMutex_);
  target_.commandResult_ = nullptr;
  target_.commandThread_ = {};
  target_.trailer_.reset();
}

std::string LldbTarget::CommandScope::takeTrailer() {
  target_.settle(); // what it prints belongs with the rest
  std::lock_guard print(target_.printMutex_);
  return target_.trailer_ ? std::exchange(*target_.trailer_, {}) : std::string();
}

bool LldbTarget::hasProcess() {
  lldb::SBProcess process = selectedProcess();
  if (!process.IsValid())
    return false;
  switch (process.GetState()) {
  case lldb::eStateInvalid:
  case lldb::eStateUnloaded:
  case lldb::eStateDetached:
  case lldb::eStateExited:
    return false;
  default:
    return true;
  }
}

Isa LldbTarget::isa() {
  // "i386-unknown-linux-gnu": the architecture is the triple's first word.
  const char *triple = selectedTarget().GetTriple();
  const std::string_view name = triple ? triple : "";
  return requireIsa(name.substr(0, name.find('-')));
}

const std::optional<HostProcess> &LldbTarget::hostProcess() {
  lldb::SBProcess process = selectedProcess();
  lldb::SBThread thread = process.GetSelectedThread();
  return hosts_.find(static_cast<int>(process.GetProcessID()),
                     thread.IsValid() ? thread.GetThreadID() : 0,
                     pathOf(selectedTarget().GetExecutable()));
}

int LldbTarget::pid() {
  hostProcess();
  return hosts_.pid();
}

bool LldbTarget::isHostProcess() { return hostProcess().has_value(); }

bool LldbTarget::isEmulated() {
  const std::optional<HostProcess> &host = hostProcess();
  return host && host->emulated;
}

std::vector<uint64_t> LldbTarget::threads() {
  if (early_.active())
    return early_.threads();
  lldb::SBProcess process = selectedProcess();
  std::vector<uint64_t> ids;
  uint32_t count = process.GetNumThreads();
  ids.reserve(count);
  for (uint32_t i = 0; i < count; ++i)
    ids.push_back(process.GetThreadAtIndex(i).GetThreadID());
  syscallFiles_.retain(ids);
  return ids;
}

std::optional<uint64_t> LldbTarget::syscallNumber(uint64_t tid) {
  // LLDB does not expose orig_rax; the kernel tells the same for a stopped thread: the number of
  // the system call it is in, or -1.
  std::optional<long long> number = leadingNumber<long long>(syscallFiles_.read(tid));
  if (!number)
    return std::nullopt;
  return static_cast<uint64_t>(*number);
}

template <typename Fill> bool LldbTarget::offerEarlySample(uint64_t tid, Fill fill) {
  // The engine is this thread's only if nobody else holds it, or if its holder waits in the
  // resume that this stop belongs to (see sampleInForeground()).
  std::unique_lock lock(sessionMutex_, std::try_to_lock);
  if ((!lock.owns_lock() && !sessionParked_) || !armedSession_ || interruptRequested() ||
      !early_.depth())
    return false;
  ThreadSnapshot &snapshot = early_.snapshot();
  snapshot.tid = tid;
  return fill(snapshot.regs) &&
         setup_.native->walk(snapshot.regs, early_.depth(), snapshot.stack) &&
         early_.offer(*armedSession_, armedHostSignal_);
}

bool LldbTarget::takeSampleFromReply(std::string_view reply, uint64_t tid) {
  return offerEarlySample(tid, [&](std::vector<uint64_t> &regs) {
    const RegisterTable &table = registerTable(setup_.isa);
    regs.assign(table.regs.size(), 0);
    filled_.assign(table.regs.size(), false);
    setup_.remote->fill(reply, regs, filled_);
    for (size_t i = 0; i < table.regs.size(); ++i)
      if (!filled_[i] && i != table.syscallNr)
        return false;
    if (table.syscallNr)
      regs[*table.syscallNr] = syscallNumber(tid).value_or(~0ull);
    return true;
  });
}

bool LldbTarget::takeSampleFromServer(uint64_t tid, std::span<const uint8_t> registers) {
  // Only during strobe's resumes: a stop of a resume of the user's (an expression, a step over a
  // call) goes LLDB's way, as it would without strobe.
  return samplingResume_ && offerEarlySample(tid, [&](std::vector<uint64_t> &regs) {
           return registersFromPrStatus(setup_.isa, registers, regs);
         });
}

bool LldbTarget::readThread(uint64_t tid, unsigned stackDepth, ThreadSnapshot &out) {
  if (early_.active())
    return early_.readThread(tid, stackDepth, out, *setup_.native);
  if (heldStep(tid)) {
    out.tid = tid;
    return registersFromPrStatus(setup_.isa, serverSteps_->registers(), out.regs) &&
           setup_.native->walk(out.regs, stackDepth, out.stack);
  }
  if (armedSession_)
    early_.noteDepth(stackDepth);
  lldb::SBProcess process = selectedProcess();
  if (setup_.process != process.GetUniqueID())
    learnSetup(); // a breakpoint's handler may read a process no capture was armed on
  const RegisterTable &table = registerTable(setup_.isa);
  out.tid = tid;
  out.regs.assign(table.regs.size(), 0);
  filled_.assign(table.regs.size(), false);
  if (setup_.remote)
    setup_.remote->read(tid, out.regs, filled_);
  // Frame 0 only for what the request did not answer: it costs 6-10 us.
  lldb::SBThread thread = process.GetThreadByID(tid);
  lldb::SBFrame frame;
  auto frameZero = [&] {
    if (!frame.IsValid())
      frame = thread.GetFrameAtIndex(0);
    return frame.IsValid();
  };
  for (unsigned i = 0; i < table.regs.size(); ++i) {
    if (filled_[i] || setup_.absent[i])
      continue;
    if (!frameZero())
      return false;
    // pc, sp and fp come straight from the register context; the rest through SBValues.
    if (i == table.pc)
      out.regs[i] = frame.GetPC();
    else if (i == table.sp)
      out.regs[i] = frame.GetSP();
    else if (i == table.fp)
      out.regs[i] = frame.GetFP();
    else if (std::optional<uint64_t> value = registerValue(frame, setup_.names[i].c_str()))
      out.regs[i] = *value;
    else
      setup_.absent[i] = true;
  }
  if (table.syscallNr && setup_.absent[*table.syscallNr])
    out.regs[*table.syscallNr] = setup_.host ? syscallNumber(tid).value_or(~0ull) : ~0ull;
  if (setup_.native && setup_.native->walk(out.regs, stackDepth, out.stack))
    return true;
  if (!frameZero())
    return false;
  // One entry per physical frame: LLDB lists inlined calls as frames of their own, sharing the
  // physical frame of the function they were inlined into.
  out.stack.assign(1, out.regs[table.pc]);
  bool physicalFrameEnds = !frame.IsInlined();
  for (uint32_t i = 1; out.stack.size() < stackDepth; ++i) {
    lldb::SBFrame caller = thread.GetFrameAtIndex(i);
    if (!caller.IsValid())
      break;
    if (caller.IsArtificial())
      continue;
    if (physicalFrameEnds)
      out.stack.push_back(caller.GetPC());
    physicalFrameEnds = !caller.IsInlined();
  }
  return true;
}

std::vector<ModuleInfo> LldbTarget::modules() {
  lldb::SBTarget target = selectedTarget();
  const bool host = isHostProcess();
  std::vector<ModuleInfo> result;
  for (uint32_t m = 0; m < target.GetNumModules(); ++m) {
    lldb::SBModule module = target.GetModuleAtIndex(m);
    ModuleInfo info;
    info.path = pathOf(module.GetFileSpec());
    // By the file a symbolic link names, as GDB shows it ("libstdc++.so.6.0.30", not the
    // loader's "libstdc++.so.6").
    if (char *real = host ? realpath(info.path.c_str(), nullptr) : nullptr) {
      info.path = real;
      std::free(real);
    }
    if (const char *uuid = module.GetUUIDString())
      for (const char *c = uuid; *c; ++c)
        if (*c != '-')
          info.buildId += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    bool loaded = false;
    for (size_t s = 0; s < module.GetNumSections(); ++s) {
      lldb::SBSection section = module.GetSectionAtIndex(s);
      lldb::addr_t load = section.GetLoadAddress(target);
      if (load == LLDB_INVALID_ADDRESS || section.GetByteSize() == 0)
        continue;
      if (!loaded) {
        info.start = load;
        info.bias = load - section.GetFileAddress();
        loaded = true;
      }
      info.start = std::min<uint64_t>(info.start, load);
      info.end = std::max<uint64_t>(info.end, load + section.GetByteSize());
    }
    if (loaded)
      result.push_back(std::move(info));
  }
  return result;
}

SymbolInfo LldbTarget::symbolize(uint64_t pc) {
  endHeldRun();
  lldb::SBTarget target = selectedTarget();
  lldb::SBAddress address = target.ResolveLoadAddress(pc);
  lldb::SBSymbolContext context =
      target.ResolveSymbolContextForAddress(address, lldb::eSymbolContextEverything);
  SymbolInfo info;
  lldb::SBAddress start, end;
  if (lldb::SBFunction function = context.GetFunction(); function.IsValid()) {
    info.function = function.GetName() ? function.GetName() : "";
    // LLDB names an extern "C" function of a C++ unit "::leaf(int)"; GDB, "leaf(int)".
    if (info.function.starts_with("::"))
      info.function.erase(0, 2);
    start = function.GetStartAddress();
    end = function.GetEndAddress();
  } else if (lldb::SBSymbol symbol = context.GetSymbol(); symbol.IsValid()) {
    info.function = symbolName(symbol);
    start = symbol.GetStartAddress();
    end = symbol.GetEndAddress();
  }
  if (start.IsValid()) {
    info.start = start.GetLoadAddress(target);
    if (end.IsValid() && end.GetLoadAddress(target) > info.start)
      info.size = end.GetLoadAddress(target) - info.start;
  }
  if (lldb::SBLineEntry line = context.GetLineEntry(); line.IsValid() && line.GetLine() != 0) {
    info.file = pathOf(line.GetFileSpec());
    info.line = line.GetLine();
  }
  for (lldb::SBBlock block = context.GetBlock().GetContainingInlinedBlock(); block.IsValid();
       block = block.GetParent().GetContainingInlinedBlock())
    if (const char *name = block.GetInlinedName())
      info.inlined.emplace_back(name);
  return info;
}

std::vector<uint8_t> LldbTarget::readMemory(uint64_t addr, size_t size) {
  if (serverSteps_ && serverSteps_->holding())
    return readHostMemory(addr, size);
  std::vector<uint8_t> bytes(size);
  lldb::SBError error;
  size_t read = 0;
  if (hasProcess()) {
    read = selectedProcess().ReadMemory(addr, bytes.data(), size, error);
  } else {
    // A capture that ended with the process still wants the code of the functions it sampled
    // (GDB reads it from the executable file then): LLDB keeps the load addresses, so its
    // modules' sections answer for the code, never for the stack or heap.
    lldb::SBTarget target = selectedTarget();
    read = target.ReadMemory(target.ResolveLoadAddress(addr), bytes.data(), size, error);
  }
  bytes.resize(error.Success() ? read : 0);
  return bytes;
}

uint64_t LldbTarget::currentThread() { return selectedProcess().GetSelectedThread().GetThreadID(); }

bool LldbTarget::readExtended(uint64_t tid, ExtendedSnapshot &out) {
  if (heldStep(tid))
    return extendedFromRegsets(setup_.isa, serverSteps_->registers(),
                               serverSteps_->extendedRegisters(), out.values);
  lldb::SBProcess process = selectedProcess();
  lldb::SBFrame frame = process.GetThreadByID(tid).GetFrameAtIndex(0);
  if (!frame.IsValid())
    return false;
  if (setup_.process != process.GetUniqueID())
    learnSetup();
  if (setup_.remote && setup_.remote->readExtended(tid, out))
    return true;
  const RegisterTable &table = registerTable(setup_.isa);
  out.values.assign(table.extSlots(), 0);
  out.absent.clear();
  auto slot = out.values.begin();
  bool any = false;
  for (const ExtRegister &reg : table.ext) {
    // Register values are little-endian on both ISAs; a shorter one (fctrl, fpsr) is
    // zero-extended, one LLDB does not have reads as 0, like readThread()'s.
    lldb::SBValue value = frame.FindRegister(std::string(reg.name).c_str());
    size_t offset = 0;
    if (std::optional<WholeRegister> whole = wholeRegisterOf(reg); whole && !value.IsValid()) {
      value = frame.FindRegister(whole->name.c_str());
      offset = whole->offset;
    }
    if (value.IsValid()) {
      value.SetPreferSyntheticValue(false);
      lldb::SBData data = value.GetData();
      lldb::SBError error;
      const size_t have = data.GetByteSize();
      const size_t size = have > offset ? std::min<size_t>(have - offset, reg.bytes) : 0;
      if (size > 0 && data.ReadRawData(error, offset, &*slot, size) == size && error.Success())
        any = true;
    } else {
      out.absent.emplace_back(reg.name);
    }
    slot += reg.bytes / 8;
  }
  return any;
}

std::vector<uint64_t> LldbTarget::resolve(std::string_view location) {
  return resolveLocation(selectedTarget(), location);
}

std::optional<DataLocation> LldbTarget::dataAddress(std::string_view name) {
  return resolveVariable(selectedTarget(), name);
}

void LldbTarget::learnSetup() {
  lldb::SBProcess process = selectedProcess();
  setup_ = {};
  setup_.process = process.GetUniqueID();
  setup_.isa = isa();
  setup_.host = isHostProcess();
  setup_.pid = pid();
  syscallFiles_ = ThreadProcFiles(setup_.pid, "syscall"); // closes another process's
  for (std::string_view name : registerTable(setup_.isa).regs)
    setup_.names.emplace_back(name == "eflags" ? "rflags" : name); // LLDB's spelling
  setup_.absent.assign(setup_.names.size(), false);
  early_.noteDepth(0);
  setup_.remote =
      RemoteRegisters::learn(debugger_, process, setup_.names, registerTable(setup_.isa).ext);
  if (setup_.host && !isEmulated())
    setup_.native.emplace(setup_.isa, setup_.pid);
}

std::unique_ptr<Arming> LldbTarget::arm(Session &session, int signo) {
  if (background_ && background_->finished())
    background_.reset();
  settle();
  learnSetup();
  return std::make_unique<LldbArming>(*this, session, selectedProcess(), signo);
}

bool LldbTarget::interruptRequested() {
  return InterruptWatch::requested() || debugger_.InterruptRequested();
}

std::unique_ptr<SteppingScope> LldbTarget::beginStepping(uint64_t tid,
                                                         const std::set<uint64_t> &until) {
  struct Scope : SteppingScope {
    explicit Scope(LldbTarget &target)
        : target(target), process(target.selectedProcess()),
          watcher([this](std::stop_token stop) { watch(stop); }) {}
    ~Scope() override {
      watcher.request_stop();
      watcher.join();
      target.serverSteps_.reset();
      target.steppedBreakpoints_.reset();
    }
    void lastStepNext() override { target.lastStepNext_ = true; }
    bool mayStopHere() const override { return !target.heldAtRunStart(); }
    // A step that does not return (the thread blocks on one held stopped) still ends at Ctrl-C:
    // InterruptWatch, LLDB's handler meanwhile, only notes it, and the Stepper looks between
    // steps. Interrupting the process ends the step; a step that returns soon is left alone.
    void watch(std::stop_token stop) {
      constexpr auto kPoll = std::chrono::milliseconds(20);
      constexpr std::chrono::steady_clock::duration kStepLate = std::chrono::milliseconds(200);
      while (!stop.stop_requested()) {
        std::this_thread::sleep_for(kPoll);
        const auto since = target.stepOutSince_.load();
        if (since != std::chrono::steady_clock::time_point{} &&
            std::chrono::steady_clock::now() - since > kStepLate && target.interruptRequested() &&
            !target.stepInterrupted_.exchange(true))
          process.SendAsyncInterrupt();
      }
    }
    LldbTarget &target;
    lldb::SBProcess process;
    std::jthread watcher; // last: it uses the members above
  };
  serverSteps_.reset();
  runEnd_.reset();
  steppedBreakpoints_ = std::make_unique<SteppedBreakpoints>(hidden_, selectedTarget());
  systemCalls_.clear();
  stepUntil_ = until;
  lastStepNext_ = false;
  if (setup_.process != selectedProcess().GetUniqueID())
    learnSetup();
  // Runs of steps inside lldb-server: in a process on this host, whose lldb-server strobe
  // started. Not with a watchpoint: the kernel reports a watchpoint that fires during a step as
  // the step's own trap, which LLDB's step examines further.
  if (setup_.native)
    serverSteps_ = ServerSteps::open(setup_.pid, tid);
  if (setup_.native && !serverSteps_ && serverTapWanted() && toldNoLibrary_ != setup_.process) {
    toldNoLibrary_ = setup_.process;
    print("strobe: this process's lldb-server runs without strobe's library, so each instruction "
          "is one of LLDB's own steps (about 1 ms). One that LLDB starts after 'plugin load' has "
          "the library; start yours through " +
          serverLauncher().string() + " in lldb-server's place (about 0.1 ms a step)\n");
  }
  serverRuns_ = serverSteps_ && selectedTarget().GetNumWatchpoints() == 0;
  return std::make_unique<Scope>(*this);
}

std::vector<uint8_t> LldbTarget::readHostMemory(uint64_t addr, size_t size) {
  std::vector<uint8_t> bytes(size);
  bytes.resize(readProcessMemoryPrefix(setup_.pid, addr, bytes.data(), size));
  return bytes;
}

std::optional<InstructionInfo> LldbTarget::instructionAt(uint64_t pc) {
  constexpr size_t kLongestInstruction = 15;
  std::vector<uint8_t> bytes(kLongestInstruction);
  if (setup_.native) {
    bytes = readHostMemory(pc, kLongestInstruction);
  } else {
    lldb::SBError error;
    bytes.resize(selectedProcess().ReadMemory(pc, bytes.data(), bytes.size(), error));
  }
  if (!stepDecoder_)
    stepDecoder_.emplace(setup_.isa);
  return stepDecoder_->decode(bytes, pc);
}

bool LldbTarget::stepMayEndAt(uint64_t pc, uint64_t sp, uint64_t where) {
  const std::optional<InstructionInfo> insn = instructionAt(pc);
  if (!insn)
    return true;
  const std::optional<uint64_t> returnAddress =
      returnAddressOf(setup_.isa, *insn, sp, [this](uint64_t address, size_t size) {
        return readHostMemory(address, size);
      });
  return stepMayLandAt(*insn, returnAddress, where);
}

std::optional<uint64_t> LldbTarget::afterSystemCallAt(uint64_t pc) {
  if (auto known = systemCalls_.find(pc); known != systemCalls_.end())
    return known->second;
  const std::optional<InstructionInfo> insn = instructionAt(pc);
  std::optional<uint64_t> after;
  if (insn && insn->kind == BranchKind::Syscall)
    after = pc + insn->length;
  systemCalls_.emplace(pc, after);
  return after;
}

bool LldbTarget::runEndsBefore(uint64_t pc, uint64_t number) {
  return afterSystemCallAt(pc) && (replacesProgram(setup_.isa, number) ||
                                   makesTask(setup_.isa, number) || endsTask(setup_.isa, number));
}

namespace {

uint64_t registerOf(lldb::SBFrame &frame, const char *name) {
  return frame.FindRegister(name).GetValueAsUnsigned(~uint64_t{0});
}

} // namespace

std::optional<uint64_t> LldbTarget::systemCallNext(lldb::SBThread &thread) {
  lldb::SBFrame frame = thread.GetFrameAtIndex(0);
  if (setup_.isa != Isa::X86_64 || !afterSystemCallAt(frame.GetPC()))
    return std::nullopt;
  return registerOf(frame, "rax");
}

std::optional<std::string> LldbTarget::forkNext(lldb::SBThread &thread, uint64_t number) {
  lldb::SBFrame frame = thread.GetFrameAtIndex(0);
  bool forks = makesTask(setup_.isa, number) &&
               !(isClone(setup_.isa, number) && (registerOf(frame, "rdi") & kCloneThread));
  if (isClone3(setup_.isa, number)) { // the flags are the first word of its struct clone_args
    lldb::SBError error;
    const uint64_t flags =
        thread.GetProcess().ReadUnsignedFromMemory(registerOf(frame, "rdi"), 8, error);
    forks = error.Fail() || !(flags & kCloneThread);
  }
  if (!forks)
    return std::nullopt;
  return "the next instruction forks the process (system call " + std::to_string(number) +
         "), after which LLDB 19 lets the process run on: the trace ends before it ('finish' "
         "out of the call that forks, then trace on)";
}

std::optional<StopEvent> LldbTarget::stepInsideServer(uint64_t tid) {
  constexpr uint8_t kInt3 = 0xcc;
  if (!serverRuns_ || serverSteps_->tid() != tid || setup_.isa != Isa::X86_64)
    return std::nullopt;
  // A breakpoint's int3 (LLDB keeps them in memory while the process is stopped) is LLDB's to
  // report or step over: a run starts only where there is none, and a step that lands on one
  // ends the run there, so that LLDB judges the stop as when its own step lands there.
  auto atBreakpointByte = [&](uint64_t pc) {
    std::vector<uint8_t> byte = readHostMemory(pc, 1);
    return byte.empty() || byte[0] == kInt3;
  };
  // After a step of the run: the held stop, unless LLDB is to have it.
  auto landed = [&] {
    if (const std::optional<uint64_t> pc = heldPc(); pc && !atBreakpointByte(*pc))
      return StopEvent{StopEvent::Kind::Step, tid, 0, 0, "instruction step"};
    return endRun(tid);
  };
  // LLDB's step that carries a run goes on stepping, unrecorded, when the run ends at the pc the
  // step began at: to its mind the step did not move. So a run never begins at an instruction
  // that may land on itself (a rep string instruction: LLDB's step takes it whole), and it ends
  // before a step that may land where it began if the Stepper may stop after that step (its
  // last, or the run began at an `until` pc); the next step begins a new run instead. Elsewhere a
  // run passes its start freely, once an iteration in a loop: a stop the Stepper chooses asks
  // first (mayStopHere), and Ctrl-C waits for a step (stepInstruction). (Only a stop the library
  // hands to lldb-server unclaimed, after LLDB stalled for seconds, could end a run there.)
  const bool stopMayFollow = std::exchange(lastStepNext_, false) || stepUntil_.count(runStart_);
  if (serverSteps_->holding()) {
    const RegisterTable &table = registerTable(setup_.isa);
    std::vector<uint64_t> regs;
    if (registersFromPrStatus(setup_.isa, serverSteps_->registers(), regs) &&
        !(stopMayFollow && stepMayEndAt(regs[table.pc], regs[table.sp], runStart_)) &&
        !runEndsBefore(regs[table.pc], regs[table.systemCallNumber]) &&
        !unguardedLoaderLanding(regs[table.pc])) {
      if (serverSteps_->stepAgain())
        return landed();
      // The library passed the step's stop on (a signal, a trap, the thread's end), and LLDB's
      // step has returned with it; or it gave up waiting and this step is still to be made.
      if (serverSteps_->stepMade())
        return endRun(tid);
      serverSteps_->finish();
      return std::nullopt;
    }
    // LLDB's step ends where the run's last step landed; this step begins the next run.
    if (StopEvent ended = endRun(tid); ended.kind != StopEvent::Kind::Step)
      return ended;
  }
  lldb::SBProcess process = selectedProcess();
  lldb::SBThread thread = process.GetThreadByID(tid);
  if (!thread.IsValid())
    return std::nullopt;
  lldb::SBFrame frame = thread.GetFrameAtIndex(0);
  const uint64_t pc = frame.GetPC();
  guardLoaderLanding(pc);
  if (atBreakpointByte(pc) || stepMayEndAt(pc, frame.GetSP(), pc) ||
      runEndsBefore(pc, registerOf(frame, "rax")))
    return std::nullopt;
  runStart_ = pc;
  lldbStepError_.Clear();
  const bool held = serverSteps_->start([this, thread]() mutable {
    SynchronousExecution synchronous(debugger_);
    HiddenBreakpoints::StopOnHit stopOnHit(hidden_);
    thread.StepInstruction(false, lldbStepError_);
  });
  return held ? landed() : endRun(tid);
}

std::optional<uint64_t> LldbTarget::unguardedLoaderLanding(uint64_t pc) {
  if (!steppedBreakpoints_)
    return std::nullopt;
  return steppedBreakpoints_->unguardedLanding(pc,
                                               [this](uint64_t at) { return instructionAt(at); });
}

void LldbTarget::guardLoaderLanding(uint64_t pc) {
  if (const std::optional<uint64_t> landing = unguardedLoaderLanding(pc))
    steppedBreakpoints_->guardInternal(*landing);
}

StopEvent LldbTarget::endRun(uint64_t tid) {
  serverSteps_->finish();
  lldb::SBProcess process = selectedProcess();
  lldb::SBThread thread = process.GetThreadByID(tid);
  return afterStep(process, thread, tid, lldbStepError_);
}

void LldbTarget::endHeldRun() {
  if (!serverSteps_ || !serverSteps_->holding())
    return;
  if (StopEvent ended = endRun(serverSteps_->tid()); ended.kind != StopEvent::Kind::Step)
    runEnd_ = std::move(ended);
}

std::optional<uint64_t> LldbTarget::heldPc() const {
  std::vector<uint64_t> regs;
  if (!serverSteps_ || !serverSteps_->holding() ||
      !registersFromPrStatus(setup_.isa, serverSteps_->registers(), regs))
    return std::nullopt;
  return regs[registerTable(setup_.isa).pc];
}

bool LldbTarget::heldAtRunStart() const {
  const std::optional<uint64_t> pc = heldPc();
  return pc && *pc == runStart_;
}

StopEvent LldbTarget::stepInstruction(uint64_t tid) {
  // Not where a run holds a stop at its start: this step moves the thread off it (no run begins
  // at an instruction that lands on itself), and the next one stops.
  if (interruptRequested() && !heldAtRunStart()) {
    if (serverSteps_)
      serverSteps_->finish(); // LLDB's API is busy while a run holds a stop
    throw Interrupted();
  }
  stepOutSince_ = std::chrono::steady_clock::now();
  StopEvent stop = stepOnce(tid);
  stepOutSince_ = std::chrono::steady_clock::time_point{};
  // Ctrl-C ended a step that did not return (see beginStepping): its stop is the interrupt's.
  if (stepInterrupted_.exchange(false)) {
    if (serverSteps_)
      serverSteps_->finish();
    throw Interrupted();
  }
  return stop;
}

StopEvent LldbTarget::stepOnce(uint64_t tid) {
  if (runEnd_)
    return *std::exchange(runEnd_, std::nullopt);
  if (std::optional<StopEvent> stepped = stepInsideServer(tid))
    return *stepped;
  lldb::SBProcess process = selectedProcess();
  lldb::SBThread thread = process.GetThreadByID(tid);
  if (!thread.IsValid())
    return {StopEvent::Kind::Other, tid, 0, 0, "no thread " + std::to_string(tid)};
  const std::optional<uint64_t> call = systemCallNext(thread);
  if (call)
    if (std::optional<std::string> fork = forkNext(thread, *call))
      return {StopEvent::Kind::Other, tid, 0, 0, *fork};
  const uint64_t pc = thread.GetFrameAtIndex(0).GetPC();
  guardLoaderLanding(pc);
  lldb::SBError error;
  {
    // Synchronous, so that the step's stop is nobody else's; the thread plan of `thread
    // step-inst` runs the thread alone.
    SynchronousExecution synchronous(debugger_);
    HiddenBreakpoints::StopOnHit stopOnHit(hidden_);
    thread.StepInstruction(false, error);
  }
  StopEvent stop = afterStep(process, thread, tid, error);
  // LLDB 19's step goes on through an exec into the new program, as if nothing happened there.
  if (call && replacesProgram(setup_.isa, *call) && stop.kind == StopEvent::Kind::Step &&
      thread.GetFrameAtIndex(0).GetPC() != *afterSystemCallAt(pc))
    return {StopEvent::Kind::Exec, tid, 0, 0, pathOf(process.GetTarget().GetExecutable())};
  return stop;
}

StopEvent LldbTarget::runTo(uint64_t tid, uint64_t address) {
  // LLDB's step that carries a run of steps inside lldb-server ends first, and may step on (see
  // stepInsideServer): where its stop is not a step, that is the run's end too.
  endHeldRun();
  if (runEnd_)
    return *std::exchange(runEnd_, std::nullopt);
  lldb::SBProcess process = selectedProcess();
  lldb::SBThread thread = process.GetThreadByID(tid);
  if (!thread.IsValid())
    return {StopEvent::Kind::Other, tid, 0, 0, "no thread " + std::to_string(tid)};
  const StopEvent arrived{StopEvent::Kind::Step, tid, 0, 0, "ran to the address"};
  if (thread.GetFrameAtIndex(0).GetPC() == address)
    return arrived;
  lldb::SBError error;
  stepOutSince_ = std::chrono::steady_clock::now(); // Ctrl-C ends it (see beginStepping)
  {
    // RunToAddress's thread plan stops the other threads. strobe's breakpoints the thread
    // passes run their handlers and let it go on.
    SynchronousExecution synchronous(debugger_);
    thread.RunToAddress(address, error);
  }
  stepOutSince_ = std::chrono::steady_clock::time_point{};
  if (stepInterrupted_.exchange(false))
    throw Interrupted();
  return afterStep(process, thread, tid, error);
}

StopEvent LldbTarget::afterStep(lldb::SBProcess &process, lldb::SBThread &thread, uint64_t tid,
                                const lldb::SBError &error) {
  if (error.Fail())
    return {StopEvent::Kind::Other, tid, 0, 0,
            error.GetCString() ? error.GetCString() : "the thread did not step"};
  if (process.GetState() != lldb::eStateStopped)
    return describeStop(process); // exited, or gone
  // Only the stepped thread ran: the others keep the reasons of earlier stops.
  lldb::StopReason reason = thread.GetStopReason();
  const StopEvent step{StopEvent::Kind::Step, tid, 0, 0, "instruction step"};
  // Landing on one of the user's breakpoints is the user's stop if LLDB would have stopped there
  // (SteppedBreakpoints); landing on one that would not, or on one of strobe's, which ran its
  // handler (see StopOnHit), stopped only for the step.
  if (reason == lldb::eStopReasonBreakpoint && steppedBreakpoints_) {
    const std::vector<std::string> users =
        steppedBreakpoints_->userStopped(thread.GetFrameAtIndex(0).GetPC());
    if (users.empty())
      return step;
    StopEvent event{StopEvent::Kind::Breakpoint, tid, 0, 0, "breakpoint"};
    for (const std::string &name : users)
      event.description += " " + name;
    return event;
  }
  if (reason == lldb::eStopReasonPlanComplete || reason == lldb::eStopReasonTrace ||
      reason == lldb::eStopReasonNone || stoppedAtHiddenBreakpoint(thread))
    return step;
  return threadEvent(thread);
}

std::unique_ptr<Breakpoint> LldbTarget::insertBreakpoint(uint64_t address,
                                                         BreakpointHandler handler) {
  return hidden_.insert(selectedTarget(), address, std::move(handler));
}

void LldbTarget::runHit(const BreakpointHandler &handler, uint64_t tid) {
  // LLDB's step that began a run of steps inside lldb-server runs on a thread of its own, and the
  // hit of a breakpoint it lands on with it, while the command that holds the session waits for
  // that step to return: the session is this hit's.
  if (serverSteps_ && serverSteps_->onLldbStepThread()) {
    handler(tid);
    return;
  }
  std::unique_lock lock(sessionMutex_, std::defer_lock);
  while (!lock.try_lock()) {
    // `strobe stop` holds the session while it waits for the background thread to end: the
    // capture ends at this stop, and this hit goes unrecorded rather than blocking it.
    if (BackgroundSampler::endingOnThisThread())
      return;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  handler(tid);
}

bool LldbTarget::stoppedAtHiddenBreakpoint(lldb::SBThread &thread) {
  if (thread.GetStopReason() != lldb::eStopReasonBreakpoint)
    return false;
  lldb::SBTarget target = selectedTarget();
  // The reason's data: a (breakpoint, location) pair for each owner of the site.
  size_t count = thread.GetStopReasonDataCount();
  for (size_t i = 0; i + 1 < count; i += 2)
    if (!hidden_.owns(target, static_cast<lldb::break_id_t>(thread.GetStopReasonDataAtIndex(i))))
      return false;
  return count >= 2;
}

StopEvent LldbTarget::describeStop(lldb::SBProcess &process) {
  StopEvent event;
  switch (process.GetState()) {
  case lldb::eStateExited: {
    event.kind = StopEvent::Kind::Exited;
    event.exitCode = process.GetExitStatus();
    // LLDB has words only for an unusual exit; otherwise its own "exited with status = N".
    const char *why = process.GetExitDescription();
    event.description = why ? why : "exited with status " + std::to_string(event.exitCode);
    return event;
  }
  case lldb::eStateStopped:
  case lldb::eStateCrashed:
  case lldb::eStateSuspended:
    break;
  default:
    event.description = "the process is gone";
    return event;
  }
  // The selected thread is LLDB's own pick for the stop; any thread with a reason strobe did not
  // cause wins over a sample signal, so that nothing the user must see is mistaken for a sample.
  std::vector<lldb::SBThread> order{process.GetSelectedThread()};
  for (uint32_t i = 0; i < process.GetNumThreads(); ++i)
    order.push_back(process.GetThreadAtIndex(i));
  bool sampled = false;
  uint64_t sampleThread = 0;
  for (lldb::SBThread &thread : order) {
    if (!thread.IsValid())
      continue;
    lldb::StopReason reason = thread.GetStopReason();
    // A trace is LLDB stepping a thread over a breakpoint inside one resume; a thread it stepped
    // keeps that reason while LLDB steps the next one, which a sample signal may interrupt.
    if (reason == lldb::eStopReasonNone || reason == lldb::eStopReasonInvalid ||
        reason == lldb::eStopReasonTrace || stoppedAtHiddenBreakpoint(thread))
      continue;
    if (reason == lldb::eStopReasonSignal &&
        static_cast<int>(thread.GetStopReasonDataAtIndex(0)) == armedSignal_) {
      sampled = true;
      sampleThread = thread.GetThreadID();
      continue;
    }
    return threadEvent(thread);
  }
  if (sampled) {
    event.kind = StopEvent::Kind::Signal;
    event.tid = sampleThread;
    event.signo = armedHostSignal_;
  }
  return event;
}

StopEvent LldbTarget::threadEvent(lldb::SBThread &thread) {
  StopEvent event;
  lldb::StopReason reason = thread.GetStopReason();
  event.kind = reason == lldb::eStopReasonSignal       ? StopEvent::Kind::Signal
               : reason == lldb::eStopReasonBreakpoint ? StopEvent::Kind::Breakpoint
                                                       : StopEvent::Kind::Other;
  event.tid = thread.GetThreadID();
  if (reason == lldb::eStopReasonExec) {
    event.kind = StopEvent::Kind::Exec;
    event.description = pathOf(thread.GetProcess().GetTarget().GetExecutable());
    return event;
  }
  if (reason == lldb::eStopReasonSignal) {
    event.signo = static_cast<int>(thread.GetStopReasonDataAtIndex(0));
    if (isEmulated())
      event.signo = hostSignalFromGdb(event.signo).value_or(event.signo);
  }
  if (reason == lldb::eStopReasonBreakpoint) {
    // LLDB's words list every owner of the site, strobe's hidden ones too; and once asked for,
    // it keeps them for `thread list` after strobe's are gone.
    lldb::SBTarget target = selectedTarget();
    event.description = "breakpoint";
    for (size_t i = 0; i + 1 < thread.GetStopReasonDataCount(); i += 2) {
      const auto id = static_cast<lldb::break_id_t>(thread.GetStopReasonDataAtIndex(i));
      if (!hidden_.owns(target, id))
        event.description +=
            " " + std::to_string(id) + "." + std::to_string(thread.GetStopReasonDataAtIndex(i + 1));
    }
    return event;
  }
  char description[256] = {};
  thread.GetStopDescription(description, sizeof description);
  event.description = description;
  return event;
}

std::string LldbTarget::stopStatus() {
  // What `process status` prints, composed here: a nested command would be cut short when the
  // user interrupted the command this runs in.
  lldb::SBProcess process = selectedProcess();
  lldb::StateType state = process.GetState();
  unsigned long long pid = process.GetProcessID();
  char line[256];
  if (state == lldb::eStateExited) {
    int status = process.GetExitStatus();
    const char *why = process.GetExitDescription();
    std::snprintf(line, sizeof line, "Process %llu exited with status = %d (0x%8.8x)%s%s\n", pid,
                  status, static_cast<unsigned>(status), why ? " " : "", why ? why : "");
    return line;
  }
  std::snprintf(line, sizeof line, "Process %llu %s\n", pid,
                lldb::SBDebugger::StateAsCString(state));
  std::string text = line;
  for (uint32_t i = 0; i < process.GetNumThreads(); ++i) {
    lldb::SBThread thread = process.GetThreadAtIndex(i);
    lldb::StopReason reason = thread.GetStopReason();
    if (reason == lldb::eStopReasonNone || reason == lldb::eStopReasonInvalid ||
        stoppedAtHiddenBreakpoint(thread))
      continue;
    lldb::SBStream status;
    thread.GetStatus(status);
    text += status.GetData() ? status.GetData() : "";
  }
  return text;
}

StopEvent LldbTarget::runUntilUserStop() {
  lldb::SBProcess process = selectedProcess();
  return sampleInForeground(process);
}

StopEvent LldbTarget::sampleInForeground(lldb::SBProcess &process) {
  SynchronousExecution synchronous(debugger_);
  for (;;) {
    lldb::SBError error = continueSampling(process, true);
    StopEvent event;
    if (error.Success())
      event = describeStop(process);
    else
      event.description = error.GetCString() ? error.GetCString() : "the process did not resume";
    Verdict verdict = armedSession_ ? armedSession_->onStop(event) : Verdict::HandToUser;
    // Ctrl-C (see InterruptWatch), or an interrupt a client requested through the SB API: the
    // capture ends at this stop and keeps what it took.
    if (verdict == Verdict::Resume && interruptRequested() && armedSession_) {
      event = {StopEvent::Kind::Other, event.tid, 0, 0, "interrupted"};
      verdict = armedSession_->onStop(event);
    }
    if (verdict == Verdict::Resume)
      continue;
    // The session has ended the capture and stopped its timer: settle first, so that what the
    // user is shown is the stop as it will stay.
    settle();
    if (verdict == Verdict::HandToUser)
      print(stopStatus());
    return event;
  }
}

void LldbTarget::restoreSignal(const SignalHandling &handling, bool silent) {
  lldb::SBUnixSignals signals = handling.signals;
  signals.SetShouldStop(handling.signo, silent ? false : handling.stop);
  signals.SetShouldNotify(handling.signo, silent ? false : handling.notify);
  signals.SetShouldSuppress(handling.signo, silent ? true : handling.suppress);
}

void LldbTarget::resumeAsUser(lldb::SBProcess &process) {
  bool wasAsync = debugger_.GetAsync();
  debugger_.SetAsync(true);
  const uint32_t stopId = process.GetStopID();
  const bool resumed = continueProcess(process).Success();
  debugger_.SetAsync(wasAsync);
  // The public state turns to running only once LLDB's event thread has handled the resume: a
  // command typed at once (`strobe start --no-resume` after `strobe stop`) would otherwise find
  // the process stopped, and arm without ever resuming it. A new stop also ends the wait.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (resumed && process.GetState() == lldb::eStateStopped && process.GetStopID() == stopId &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void LldbTarget::interceptContinue(bool on) {
  debugger_.GetCommandInterpreter().SetCommandOverrideCallback(
      "process continue", on ? &LldbTarget::onContinueCommand : nullptr, on ? this : nullptr);
}

bool LldbTarget::onContinueCommand(void *self, const char **) {
  LldbTarget &target = *static_cast<LldbTarget *>(self);
  std::unique_lock lock(target.sessionMutex_, std::try_to_lock);
  lldb::SBProcess process = target.selectedProcess();
  if (!lock.owns_lock() || !target.armedSession_ || target.background_ ||
      process.GetState() != lldb::eStateStopped)
    return false; // LLDB's own `continue`, with what it says about the state
  target.armedSession_->beforeUserResume();
  target.print("Process " + std::to_string(process.GetProcessID()) + " resuming\n");
  if (target.debugger_.GetAsync())
    target.resumeInBackground();
  else
    target.sampleInForeground(process); // like a synchronous `continue`: until a stop
  target.settle();
  return true;
}

void LldbTarget::resumeInBackground() {
  lldb::SBProcess process = selectedProcess();
  if (debugger_.GetAsync() && setup_.host && ownsTerminalOf(setup_.pid)) {
    // LLDB gives this program the terminal whenever it runs and takes it back at every stop: a
    // background thread's stops would swap the prompt and the program's input a thousand times a
    // second. Run it like LLDB's own `continue` does here: in the foreground, the program has
    // the terminal, Ctrl-C or any stop of its own ends sampling. The engine's words come after
    // its "sampling pid ..." line.
    trailer_.emplace();
    sampleInForeground(process);
    return;
  }
  background_ = std::make_unique<BackgroundSampler>(*this, process, setup_.pid, armedHostSignal_);
}

void LldbTarget::settle() {
  if (!releaseOwed_)
    return;
  const SignalHandling handling = *releaseOwed_;
  lldb::SBProcess process = selectedProcess();
  lldb::StateType state =
      process.IsValid() && static_cast<int>(process.GetProcessID()) == handling.pid
          ? process.GetState()
          : lldb::eStateExited;
  if (state == lldb::eStateExited || state == lldb::eStateDetached ||
      state == lldb::eStateInvalid || state == lldb::eStateUnloaded) {
    finishRelease(false); // nothing can reach that program any more
    return;
  }
  if (state != lldb::eStateStopped && state != lldb::eStateCrashed) {
    finishRelease(true); // running: a sample signal could be on its way unseen; try again later
    return;
  }
  // The engine's keepSignalSilent() guesses from its timer; with the process stopped and the
  // timer gone, the kernel and the threads' stop reasons say exactly whether a sample signal is
  // still to come: queued, or held by a stopped thread that LLDB would pass it to on resume.
  auto leftOver = [&] {
    return signalPending(handling.hostPid, handling.hostSigno) ||
           holdsSignal(process, handling.signo);
  };
  StopEvent now = describeStop(process);
  bool resume = std::exchange(resumeOwed_, false);
  if (now.kind != StopEvent::Kind::Signal || now.signo != handling.hostSigno) {
    // A stop the user has seen stays as it is. A sample signal still to come stays discarded
    // until a later settle() finds it gone (the user's next `continue` drops it).
    finishRelease(leftOver());
    return;
  }
  // A stop of strobe's own, which the user has not seen: first get any queued sample signal out
  // of the way where strobe still owns the stops (still armed; synchronous, so hidden).
  SynchronousExecution synchronous(debugger_);
  for (int attempt = 0; attempt < 4 && signalPending(handling.hostPid, handling.hostSigno);
       ++attempt) {
    if (!continueProcess(process).Success())
      break;
    if (StopEvent next = describeStop(process);
        next.kind != StopEvent::Kind::Signal || next.signo != handling.hostSigno) {
      finishRelease(leftOver());
      print(stopStatus()); // something of the user's came first
      return;
    }
  }
  if (resume) {
    // `strobe stop` while running: the process runs on. Its current stop holds a sample signal,
    // which this resume drops (the signal is still suppressed); then the user's handling is back.
    resumeAsUser(process);
    finishRelease(signalPending(handling.hostPid, handling.hostSigno));
    return;
  }
  // The capture ended at a sample stop and the process stays stopped (a duration or a sample
  // count was reached). The thread there holds the sample signal, which the user's first
  // `continue` would pass to the program. SIGSTOP is delivered before any real-time signal and
  // LLDB neither passes nor hides it by default: the process ends up stopped by the signal
  // `process interrupt` uses, no instruction further on, holding nothing that can harm it.
  // (Not under qemu-user: a SIGSTOP would stop the emulator, which then reports nothing. The
  // thread keeps the sample signal, and the signal stays silent until a later settle() finds it
  // gone.)
  lldb::SBUnixSignals signals = process.GetUnixSignals();
  if (!handling.emulated && signals.GetShouldStop(SIGSTOP) && signals.GetShouldSuppress(SIGSTOP) &&
      ::kill(handling.hostPid, SIGSTOP) == 0 && continueProcess(process).Success()) {
    StopEvent last = describeStop(process);
    if (last.kind != StopEvent::Kind::Signal || last.signo != SIGSTOP)
      print(stopStatus()); // something of the user's came first
  }
  finishRelease(leftOver());
}

void LldbTarget::finishRelease(bool leftOver) {
  restoreSignal(*releaseOwed_, leftOver);
  if (!leftOver)
    releaseOwed_.reset();
}

bool LldbTarget::isRunning() {
  lldb::SBProcess process = selectedProcess();
  if (!process.IsValid())
    return false;
  lldb::StateType state = process.GetState();
  return state == lldb::eStateRunning || state == lldb::eStateStepping ||
         state == lldb::eStateLaunching || state == lldb::eStateAttaching;
}

void LldbTarget::print(std::string_view text) {
  if (text.empty())
    return;
  std::lock_guard lock(printMutex_);
  if (commandResult_ && commandThread_ == std::this_thread::get_id() && trailer_) {
    *trailer_ += text;
    return;
  }
  if (commandResult_ && commandThread_ == std::this_thread::get_id()) {
    commandResult_->Printf("%.*s", static_cast<int>(text.size()), text.data());
    return;
  }
  lldb::SBFile out = debugger_.GetOutputFile();
  size_t written = 0;
  out.Write(reinterpret_cast<const uint8_t *>(text.data()), text.size(), &written);
  out.Flush();
}

} // namespace strobe::lldb_plugin
