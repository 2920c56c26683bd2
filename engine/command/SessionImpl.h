// Session's state, shared by the files that implement its subcommands (Session.cpp: sampling and
// reports; StepCommand.cpp, LoopCommand.cpp, MemCommands.cpp: the others).
#pragma once

#include "analysis/Profile.h"
#include "analysis/memory/MemoryAnalysis.h"
#include "capture/AllocTracker.h"
#include "capture/Sampler.h"
#include "capture/SignalTimer.h"
#include "command/CommandLine.h"
#include "command/Session.h"
#include "io/TraceFile.h"

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace strobe {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string plural(uint64_t n, std::string_view word);
// What a capture holds, in words: "120 samples of 2 threads, 15 heap events".
std::string contents(const Capture &capture);
// The user's stop in words: "the process exited with status 0".
std::string describeStop(const StopEvent &event);

// How a live capture samples: what `start`, `record` and `loop` ask for.
struct SamplingPlan {
  double hz = 199; // prime, so it does not beat with round-number periods
  // How much sample stops may slow the inferior down (time stopped per time run); slower stops
  // lower the rate below hz. perf's own limit on its sampling is a quarter of the CPU.
  double maxSlowdown = 0.25;
  unsigned depth = 2;
  std::optional<uint64_t> duration = {};    // ns
  std::optional<uint64_t> sampleLimit = {}; // stops
  std::optional<std::string> output = {};   // a trace file to stream to
  bool blocking = false;                    // the command waits for the capture to end
};

// A capture being taken: the timer, the debugger settings it changed, and the sampler.
struct LiveCapture {
  Capture &capture;
  int signo = 0; // the sample signal
  std::unique_ptr<Arming> arming;
  Sampler sampler;
  // Started only once the debugger is armed: a sample signal must never reach an unarmed inferior,
  // whose default action for it is to die.
  std::unique_ptr<SignalTimer> timer;
  std::unique_ptr<TraceWriter> output; // --output: the capture streams to disk as it runs
  size_t samplesWritten = 0;
  uint64_t startNs = monotonicNs();
  uint64_t armedNs = startNs; // startNs is the heap tracking's when sampling joins its capture
  uint64_t stopsBefore = 0;   // the capture's stops from an earlier arming
  uint64_t lastSymbolizeNs = startNs;
  std::optional<uint64_t> sampleLimit;
  // A sample stop halts only the thread signalled (Arming::stopsOneThread()): the timer signals
  // every thread each period and each stop samples its own.
  bool oneThread = false;
  double maxSlowdown = 1.0; // --overhead, as a fraction
  bool blocking = false;    // 'strobe record' waits on it and reports how it ended
  // Runs after each sample stop with the index of its first sample (`strobe loop` reads its
  // iteration expression there).
  std::function<void(size_t)> afterSamples;

  LiveCapture(Target &target, Capture &c, unsigned depth) : capture(c), sampler(target, c, depth) {}

  // The mean period of this arming's samples of a thread up to `now`, which slow stops make
  // longer than asked; 0 before the first stop. Time in which the program blocked the sample
  // signal is left out: no period could be kept then, and no sample stands for it.
  uint64_t reachedPeriodNs(uint64_t now) const {
    const uint64_t sampled = now - armedNs - std::min(now - armedNs, timer->blockedNs());
    const double rounds = roundsTaken();
    return rounds > 0 ? static_cast<uint64_t>(static_cast<double>(sampled) / rounds) : 0;
  }
  uint64_t stopsTaken() const { return capture.stops - stopsBefore; }
  // Sample stops in rounds of the process's threads: a stop of the process is one; with one
  // thread a stop, its share of the threads its round signalled.
  double roundsTaken() const {
    return oneThread ? timer->rounds() : static_cast<double>(stopsTaken());
  }

  // Symbolizes what the last second brought and streams its samples out, so that a debugger that
  // dies mid-capture leaves a trace file holding all but the last second.
  void checkpoint() {
    sampler.symbolizePending();
    if (output) {
      output->writeSamples(std::span(capture.samples).subspan(samplesWritten));
      samplesWritten = capture.samples.size();
      output->writeNames(capture);
      output->flush();
    }
    lastSymbolizeNs = monotonicNs();
  }
};

struct Session::Impl {
  Session *session = nullptr;
  Target *target = nullptr;
  std::string debugger;
  std::unique_ptr<Capture> capture;
  Profile profile;           // the real-time reduction of `capture`, fed one sample at a time
  std::string captureOrigin; // "live", or the file it was loaded from
  // The capture is in a file: saved, streamed there (--output) or loaded from it, and not added to
  // since.
  bool captureInFile = false;
  std::unique_ptr<LiveCapture> live;
  // Monotonic time the capture's clock starts from: samples and heap events share it.
  uint64_t captureStartNs = 0;
  std::unique_ptr<AllocTracker> tracker; // `strobe mem start` until `mem stop` or the end
  // Stops reported while the heap is tracked without sampling (an exit prints the tables).
  std::unique_ptr<Arming> stopWatch;
  std::vector<std::string> transparent; // --transparent: the user's allocator wrappers
  std::string endMessage; // how the last live capture ended, for the command that waits on it
  // What strobe's own stops cost in the last live capture (the debugger's share is the rest).
  uint64_t latencyNs = 0;    // signal sent -> stop reported to the engine, summed
  uint64_t readNs = 0;       // reading every thread at a stop, summed
  uint64_t routineStops = 0; // of them, taken by takeRoutineSample()
  // How the last live capture lost time to a program that blocked the sample signal, if it did.
  std::string blockedNote;

  bool run(const ParsedCommand &cmd, std::string &out);

  Target &process() {
    if (!target || !target->hasProcess())
      throw Failure("no process; launch or attach to one first (strobe needs a running process)");
    return *target;
  }
  // A session without a debugger is strobe-report's, where the user types other words.
  const Invocation &invocation() const {
    static const Invocation offline{"strobe-report FILE", "strobe-report help"};
    return target ? kInDebugger : offline;
  }
  const Capture &captureForReport() const {
    if (!capture || capture->samples.empty())
      throw Failure(
          capture
              ? "the capture holds no samples"
              : "nothing captured yet; use 'strobe record', 'strobe start' or 'strobe load FILE'");
    return *capture;
  }

  // An empty capture of `t`'s process, begun now.
  std::unique_ptr<Capture> newCapture(Target &t) const;
  // The only way the held capture changes hands. Replacing one that is in no file loses it, and
  // that is said (strobe holds one capture; perf at least keeps perf.data.old).
  void replaceCapture(std::unique_ptr<Capture> next, std::string origin);
  // The capture that events of a new kind (a step trace) join: the one held for this very process,
  // or a fresh one.
  Capture &captureForEvents(Target &t);
  void step(const ParsedCommand &cmd, std::string &out);
  // `defaults` with the sampling options the command was given.
  SamplingPlan samplingPlan(const ParsedCommand &cmd, SamplingPlan defaults) const;
  void arm(const SamplingPlan &plan);
  void loop(const ParsedCommand &cmd, std::string &out);
  void memory(const ParsedCommand &cmd, std::string &out);
  MemoryAnalysisOptions memoryAnalysis(const ParsedCommand &cmd) const;
  const Capture &captureWithHeapEvents();
  void endHeapTracking();
  // What an exit or a crash prints while the heap is tracked: the table and the leaks.
  std::string heapTablesAtEnd(const std::string &why);
  // For a stop that ends the program (an exit, an exec or a crash) while the heap is tracked: the
  // heap tables, and the end of tracking after an exit or an exec; nothing for other stops.
  std::string heapAtProgramEnd(const StopEvent &event);
  // `strobe step` is running: the stops it meets are its own to report (see onStop).
  bool stepping = false;
  // Plants again the heap breakpoints a debugger command deleted, while the process is stopped;
  // what to tell the user, or nothing.
  std::string replantHeapHooks();
  void finish(const std::string &reason);
  Verdict onStop(const StopEvent &event);
  // Samples the threads of a sample stop (every thread, or the stopped one with oneThread) and
  // counts it; returns when it was done.
  uint64_t sampleStop(const StopEvent &event);
  bool takeRoutineSample(const StopEvent &event);
  std::string status() const;
};

} // namespace strobe
