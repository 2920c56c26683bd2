// The Target port over LLDB's SB API. It follows the debugger's selected target and process, so
// one instance serves a whole debugger session whatever the user launches or attaches to.
#pragma once

#include "HiddenBreakpoints.h"
#include "InterruptWatch.h"
#include "RemoteRegisters.h"
#include "ServerSteps.h"
#include "SteppedBreakpoints.h"
#include "capture/ProcFile.h"
#include "command/RoutineSample.h"
#include "isa/InstructionInfo.h"
#include "native/NativeStack.h"
#include "target/HostProcess.h"
#include "target/Target.h"

#include <lldb/API/SBCommandReturnObject.h>
#include <lldb/API/SBDebugger.h>
#include <lldb/API/SBError.h>
#include <lldb/API/SBProcess.h>
#include <lldb/API/SBTarget.h>
#include <lldb/API/SBThread.h>
#include <lldb/API/SBUnixSignals.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace strobe::lldb_plugin {

class BackgroundSampler;
class LldbArming;

class LldbTarget : public Target {
public:
  explicit LldbTarget(lldb::SBDebugger debugger);
  ~LldbTarget() override;
  LldbTarget(const LldbTarget &) = delete;
  LldbTarget &operator=(const LldbTarget &) = delete;

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
  StopEvent stepInstruction(uint64_t tid) override;
  StopEvent runTo(uint64_t tid, uint64_t address) override;
  std::unique_ptr<SteppingScope> beginStepping(uint64_t tid,
                                               const std::set<uint64_t> &until) override;
  std::unique_ptr<Breakpoint> insertBreakpoint(uint64_t address,
                                               BreakpointHandler handler) override;

  void print(std::string_view text) override;

  // Serialises the engine: every `strobe` command, every stop reported from the background
  // thread and every hit of strobe's breakpoints run under it, so the session never sees two
  // threads at once. Recursive: a breakpoint's hit runs on the thread that resumed the process,
  // which is inside a `strobe` command when that command resumed it.
  std::recursive_mutex &sessionMutex() { return sessionMutex_; }

  // Holds the session for one `strobe` command. print() from the command's thread writes into
  // its result, in order with the command's own output; at the end, settle() runs.
  class CommandScope {
  public:
    CommandScope(LldbTarget &target, lldb::SBCommandReturnObject &result);
    ~CommandScope();
    CommandScope(const CommandScope &) = delete;
    CommandScope &operator=(const CommandScope &) = delete;
    // Text to show after the command's own output (see resumeInBackground()).
    std::string takeTrailer();

  private:
    LldbTarget &target_;
    std::unique_lock<std::recursive_mutex> lock_;
    InterruptWatch ctrlC_;
  };

  // SBProcess::Continue(), retried for up to 0.1 s while it fails because another thread holds
  // the process's stop lock for an SB call (a Python command reading `lldb.frame`, say): such a
  // failure must not end a capture.
  static lldb::SBError continueProcess(lldb::SBProcess &process);
  // continueProcess() for a resume that samples: sample stops may be taken from lldb-server's
  // stop reply meanwhile (see StopReplyTap). `holdingSession`: this thread holds the session
  // mutex, and gives the engine to the reply's thread until the resume returns.
  lldb::SBError continueSampling(lldb::SBProcess &process, bool holdingSession);
  // Why `process` stopped, preferring a reason strobe did not cause.
  StopEvent describeStop(lldb::SBProcess &process);
  // The stop of one thread as its own reason describes it (a signal in the host's numbering).
  StopEvent threadEvent(lldb::SBThread &thread);
  // LLDB's own words for the current stop, as `process continue` would have shown them.
  std::string stopStatus();
  lldb::SBDebugger &debugger() { return debugger_; }
  Session *armedSession() const { return armedSession_; }
  // `strobe start` is sampling (call under the session lock).
  bool samplingInBackground() const;

  // Finishes what an ended capture left to do, once the engine is done with it and its timer can
  // send no more signals: the sample signal goes back to the user's handling, and a process that
  // strobe held at one of its own stops to end a background capture runs on. Runs after every
  // `strobe` command, before arming, and after the background thread's last stop.
  void settle();
  // The background thread ended at a sample stop because sampling was stopped from elsewhere.
  void oweResume() { resumeOwed_ = true; }

private:
  friend class LldbArming;

  // Ctrl-C during the current command, or an interrupt requested through the SB API.
  bool interruptRequested();

  // The sample signal's handling before strobe changed it.
  struct SignalHandling {
    lldb::SBUnixSignals signals;
    int pid = 0;       // LLDB's
    int hostPid = 0;   // the process signals go to (an emulator's under qemu-user)
    int signo = 0;     // as LLDB numbers it (under qemu-user, as GDB does)
    int hostSigno = 0; // as the host numbers it
    bool emulated = false;
    bool stop = false, notify = false, suppress = false;
  };

  // What readThread() needs, learnt once per process (and again when a capture is armed).
  struct CaptureSetup {
    uint32_t process = 0; // SBProcess::GetUniqueID(); 0 before anything was learnt
    Isa isa = Isa::X86_64;
    bool host = false;
    int pid = 0;                    // the host process's
    std::vector<std::string> names; // the register table as LLDB spells it
    std::vector<bool> absent;       // names this LLDB turned out not to know
    std::optional<RemoteRegisters> remote;
    std::optional<NativeStack> native; // a process on this host, not emulated
  };

  lldb::SBTarget selectedTarget() { return debugger_.GetSelectedTarget(); }
  const std::optional<HostProcess> &hostProcess();
  lldb::SBProcess selectedProcess() { return selectedTarget().GetProcess(); }
  void learnSetup();
  // A hit of one of strobe's breakpoints: its handler, serialised with the engine.
  void runHit(const BreakpointHandler &handler, uint64_t tid);
  // The thread stopped at one of strobe's breakpoints and nothing else.
  bool stoppedAtHiddenBreakpoint(lldb::SBThread &thread);
  std::optional<uint64_t> syscallNumber(uint64_t tid);
  // A sample stop read before LLDB handles it, offered to the engine as a routine one: `fill`
  // puts the stopped thread's registers (registerTable() order) into a vector, or fails.
  template <typename Fill> bool offerEarlySample(uint64_t tid, Fill fill);
  // StopReplyTap's Take: the sample of a stop lldb-server's reply describes.
  bool takeSampleFromReply(std::string_view reply, uint64_t tid);
  // A run of steps inside lldb-server holds a stop of `tid` (ServerSteps): LLDB's API is busy.
  bool heldStep(uint64_t tid) const {
    return serverSteps_ && serverSteps_->holding() && serverSteps_->tid() == tid;
  }
  // The next step of `tid` inside lldb-server, when a run holds its stop or can start at its pc.
  std::optional<StopEvent> stepInsideServer(uint64_t tid);
  // Ends the run of steps of `tid`: LLDB's step returns where the run's last step landed, and
  // this is its stop.
  StopEvent endRun(uint64_t tid);
  // Ends a run that holds a stop, for a call into LLDB's API, which would wait for the step; the
  // step's stop, unless a plain step, is the next step's (runEnd_).
  void endHeldRun();
  // One step of stepInstruction(): inside lldb-server where it can, else LLDB's own.
  StopEvent stepOnce(uint64_t tid);
  // The pc of the stop a run holds, if it holds one.
  std::optional<uint64_t> heldPc() const;
  // Whether a run holds a stop at the pc it began at: ending it there, LLDB's step would go on.
  bool heldAtRunStart() const;
  // Memory of the process on this host read directly (what a run of steps reads), as
  // readProcessMemoryPrefix() reads it.
  std::vector<uint8_t> readHostMemory(uint64_t addr, size_t size);
  // The instruction at `pc` (memory read on this host where the process runs here).
  std::optional<InstructionInfo> instructionAt(uint64_t pc);
  // Whether one step of the instruction at `pc`, with the stack pointer `sp`, may end at `where`
  // (stepMayLandAt, from the process's memory); yes when the bytes are no instruction.
  bool stepMayEndAt(uint64_t pc, uint64_t sp, uint64_t where);
  // Which of LLDB's own breakpoints (the loader's) a step at `pc` lands on that has no hidden
  // owner yet (SteppedBreakpoints), if any: a run of steps ends before such a step.
  std::optional<uint64_t> unguardedLoaderLanding(uint64_t pc);
  // Gives it one, before a step at `pc` that LLDB makes or a run begins with.
  void guardLoaderLanding(uint64_t pc);
  // Where a system call instruction at `pc` returns to; nullopt for another instruction.
  std::optional<uint64_t> afterSystemCallAt(uint64_t pc);
  // Whether a run of steps inside lldb-server ends before the instruction at `pc`, with system
  // call number `number` in its register: a system call that replaces the program, makes a
  // process or a thread, or ends one. LLDB steps those itself (see stepOnce()), and handles
  // their events in its own way. Other calls, a signal handler's return among them, are steps
  // like any other (x86-64 reports each as a breakpoint trap after the call: the library takes
  // it as the end of the step).
  bool runEndsBefore(uint64_t pc, uint64_t number);
  // The number of the system call `thread`'s next instruction makes (x86-64), if it makes one.
  std::optional<uint64_t> systemCallNext(lldb::SBThread &thread);
  // Why `thread` must not be stepped: its next instruction, system call `number`, makes a new
  // process (fork, vfork, a clone of no thread). LLDB 19 takes the fork's stop for one not to
  // stop at and resumes the whole process: the step would become a free run.
  std::optional<std::string> forkNext(lldb::SBThread &thread, uint64_t number);
  // The stop after LLDB's own step of `thread` (thread `tid`; `error` its outcome), as
  // stepInstruction() reports it.
  StopEvent afterStep(lldb::SBProcess &process, lldb::SBThread &thread, uint64_t tid,
                      const lldb::SBError &error);
  // ServerTap's Take: the sample of a stop lldb-server has not reported yet.
  bool takeSampleFromServer(uint64_t tid, std::span<const uint8_t> registers);
  // The user's handling back; or, when a sample signal may still arrive, the signal discarded
  // silently (stop, notify and pass off) so that it cannot reach the program.
  void restoreSignal(const SignalHandling &handling, bool silent);
  // restoreSignal() for the capture that ended; with a sample signal left over the release stays
  // owed, and the next settle() that finds the signal gone gives the user's handling back.
  void finishRelease(bool leftOver);
  // Resumes, samples and resumes again until a stop the session hands back, on this thread.
  StopEvent sampleInForeground(lldb::SBProcess &process);
  // While armed, the user's `continue` (after `strobe start --no-resume`) resumes the way
  // `strobe start` does, so that strobe's stops never reach the user.
  void interceptContinue(bool on);
  static bool onContinueCommand(void *self, const char **arguments);
  // An asynchronous continue: the process runs on and its next stop reaches the debugger's own
  // event handler, as after the user's `continue`.
  void resumeAsUser(lldb::SBProcess &process);

  lldb::SBDebugger debugger_;
  std::recursive_mutex sessionMutex_;
  Session *armedSession_ = nullptr;
  int armedSignal_ = 0;     // as LLDB numbers it
  int armedHostSignal_ = 0; // as the host, and the engine, number it
  CaptureSetup setup_;
  HostProcessLookup hosts_;
  std::vector<bool> filled_; // reused by readThread()
  RoutineSample early_;      // a sample taken before LLDB handles its stop (offerEarlySample())
  std::atomic<bool> sessionParked_{false};
  std::atomic<bool> samplingResume_{false}; // inside continueSampling()
  // Each thread's /proc/PID/task/TID/syscall, kept open: every sample of every thread reads it,
  // and inside a capture here an open, read and close cost 36-43 us, a read of the open file
  // 4-6 us. Files of threads no longer listed are closed by threads(), once per stop.
  ThreadProcFiles syscallFiles_{0, "syscall"};
  HiddenBreakpoints hidden_;
  // While a Stepper steps a thread (beginStepping()): runs of steps inside lldb-server, where
  // they can be, and the user's breakpoints.
  std::unique_ptr<ServerSteps> serverSteps_;
  bool serverRuns_ = false; // whether steps may run inside lldb-server (serverSteps_ open anyway)
  std::optional<StopEvent> runEnd_; // see endHeldRun()
  std::unique_ptr<SteppedBreakpoints> steppedBreakpoints_;
  lldb::SBError lldbStepError_; // the outcome of the step that began a run
  uint64_t runStart_ = 0;       // the pc that step began at
  // Where the Stepper stops: after a step that lands at one of stepUntil_, and after the next
  // step where lastStepNext_ (SteppingScope).
  std::set<uint64_t> stepUntil_;
  bool lastStepNext_ = false;
  // The process (its unique id) told that its lldb-server has no strobe library, once.
  uint32_t toldNoLibrary_ = 0;
  std::optional<InstructionDecoder> stepDecoder_; // instructionAt()'s, made at its first use
  std::map<uint64_t, std::optional<uint64_t>> systemCalls_; // afterSystemCallAt()'s, this trace
  // When the step out now began (none: the epoch), and whether Ctrl-C interrupted it.
  std::atomic<std::chrono::steady_clock::time_point> stepOutSince_{};
  std::atomic<bool> stepInterrupted_{false};
  std::unique_ptr<BackgroundSampler> background_;
  std::optional<SignalHandling> releaseOwed_;
  bool resumeOwed_ = false;

  std::mutex printMutex_;
  lldb::SBCommandReturnObject *commandResult_ = nullptr;
  std::thread::id commandThread_;
  std::optional<std::string> trailer_; // print()s held back until after the command's output
};

} // namespace strobe::lldb_plugin
