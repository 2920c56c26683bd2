#include "command/SessionImpl.h"

#include "command/Commands.h"
#include "report/Annotate.h"
#include "report/Dump.h"
#include "report/ProfileReport.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iterator>
#include <signal.h>
#include <unordered_set>

namespace strobe {
namespace {

constexpr uint64_t kSymbolizeEveryNs = 1'000'000'000;
// A routine sample must leave the checkpoint to a stop that onStop() takes: it may not start so
// close to the checkpoint that its own reading crosses it.
constexpr uint64_t kRoutineMarginNs = 10'000'000;

// What a command produces for a TextSink, piece by piece.
using TextProducer = std::function<void(const TextSink &)>;

// Writes what `produce` hands its sink to `path`. The file is opened at the first piece, so a
// producer that throws before it (bad input) leaves an existing file as it was.
void writeFile(const std::string &path, const TextProducer &produce) {
  std::ofstream file;
  auto opened = [&]() -> std::ofstream & {
    if (!file.is_open())
      file.open(path, std::ios::binary | std::ios::trunc);
    if (!file)
      throw Failure(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    return file;
  };
  produce([&](std::string_view piece) {
    opened().write(piece.data(), static_cast<std::streamsize>(piece.size()));
  });
  opened().flush(); // an empty file if nothing was produced
  opened();         // checks the last write and the flush
}

void writeFile(const std::string &path, const std::string &bytes) {
  writeFile(path, [&](const TextSink &sink) { sink(bytes); });
}

// The text for the console, or, when the command has --output FILE, what was written there.
std::string printOrWrite(const ParsedCommand &cmd, const TextProducer &produce,
                         std::string_view lineWord) {
  std::string text;
  if (!cmd.has("output")) {
    produce([&](std::string_view piece) { text += piece; });
    return text;
  }
  const std::string path = cmd.get("output");
  size_t lines = 0;
  writeFile(path, [&](const TextSink &sink) {
    produce([&](std::string_view piece) {
      lines += static_cast<size_t>(std::ranges::count(piece, '\n'));
      sink(piece);
    });
  });
  return fmt::format("strobe: wrote {} to {}\n", plural(lines, lineWord), path);
}

std::string printOrWrite(const ParsedCommand &cmd, const std::string &text,
                         std::string_view lineWord) {
  return printOrWrite(
      cmd, [&](const TextSink &sink) { sink(text); }, lineWord);
}

// --json, --folded or --pprof, and what each excludes.
void profileFormat(const ParsedCommand &cmd, ProfileOptions &options) {
  using Format = ProfileOptions::Format;
  const std::vector<std::pair<const char *, Format>> formats = {
      {"json", Format::Json}, {"folded", Format::Folded}, {"pprof", Format::Pprof}};
  std::vector<std::string> given;
  for (const auto &[name, format] : formats)
    if (cmd.has(name)) {
      given.push_back("--" + std::string(name));
      options.format = format;
    }
  if (given.size() > 1)
    throw UsageError(fmt::format("{} exclude each other", fmt::join(given, " and ")));
  if (!options.wholeStacks())
    return;
  if (cmd.has("by") || options.callers || cmd.has("top"))
    throw UsageError(given[0] + " writes every stack whole; it takes no --by, --callers or --top");
  if (options.format == Format::Pprof && !cmd.has("output"))
    throw UsageError("--pprof writes a binary file; name it with --output FILE");
}

} // namespace

std::string plural(uint64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string contents(const Capture &capture) {
  // The threads sampled, named or not: a file cut short lacks the list of names at its end.
  std::unordered_set<uint64_t> tids;
  for (const ThreadInfo &thread : capture.threads)
    tids.insert(thread.tid);
  const Sample *previous = nullptr; // samples come in runs of one thread's
  for (const Sample &sample : capture.samples) {
    if (!previous || previous->tid != sample.tid)
      tids.insert(sample.tid);
    previous = &sample;
  }
  std::vector<std::string> parts;
  if (!capture.allocEvents.empty())
    parts.push_back(plural(capture.allocEvents.size(), "heap event"));
  if (!capture.stepTraces.empty())
    parts.push_back(plural(capture.stepTraces.size(), "step trace"));
  if (capture.loop)
    parts.push_back("a loop capture");
  // "0 samples of 0 threads" only where sampling ran, or where nothing else is held.
  if (!capture.samples.empty() || capture.stops || capture.durationNs || parts.empty())
    parts.insert(parts.begin(), fmt::format("{} of {}", plural(capture.samples.size(), "sample"),
                                            plural(tids.size(), "thread")));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// "SIGSEGV (11)", "SIGRTMAX-1 (63)": how the user finds it in `handle` and signal(7).
static std::string signalName(int signo) {
  if (const char *name = sigabbrev_np(signo))
    return fmt::format("SIG{} ({})", name, signo);
  if (signo >= SIGRTMIN && signo <= SIGRTMAX)
    return signo - SIGRTMIN <= SIGRTMAX - signo
               ? fmt::format("SIGRTMIN+{} ({})", signo - SIGRTMIN, signo)
               : fmt::format("SIGRTMAX-{} ({})", SIGRTMAX - signo, signo);
  return std::to_string(signo);
}

std::string describeStop(const StopEvent &event) {
  switch (event.kind) {
  case StopEvent::Kind::Exited:
    return event.exitCode >= 0
               ? fmt::format("the process exited with status {}", event.exitCode)
               : fmt::format("the process was killed by signal {}", -event.exitCode);
  case StopEvent::Kind::Breakpoint:
    return "the process stopped at a breakpoint";
  case StopEvent::Kind::Signal:
  case StopEvent::Kind::Delivering:
    return "the process received signal " + signalName(event.signo);
  case StopEvent::Kind::Exec:
    return event.description.empty()
               ? "the process executed a new program"
               : fmt::format("the process executed a new program ({})", event.description);
  case StopEvent::Kind::Step:
  case StopEvent::Kind::Other:
    break;
  }
  return event.description.empty() ? "the process stopped"
                                   : "the process stopped: " + event.description;
}

std::unique_ptr<Capture> Session::Impl::newCapture(Target &t) const {
  auto fresh = std::make_unique<Capture>();
  fresh->header.isa = t.isa();
  fresh->header.pid = t.pid();
  fresh->header.debugger = debugger;
  fresh->header.startUnixNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  return fresh;
}

void Session::Impl::replaceCapture(std::unique_ptr<Capture> next, std::string origin) {
  if (capture && !captureInFile && target &&
      (!capture->samples.empty() || !capture->allocEvents.empty() || !capture->stepTraces.empty() ||
       capture->loop))
    target->print(fmt::format("strobe: the capture held ({}) was not saved and is replaced; "
                              "'strobe save FILE' keeps a capture\n",
                              contents(*capture)));
  else if (capture && captureOrigin != "live" && origin == "live" && target)
    target->print(fmt::format("strobe: reports now come from this process, no longer from {} "
                              "('strobe load' reads it again)\n",
                              captureOrigin));
  capture = std::move(next);
  captureInFile = origin != "live";
  captureOrigin = std::move(origin);
  profile = Profile();
}

Capture &Session::Impl::captureForEvents(Target &t) {
  if (capture && captureOrigin == "live" && capture->header.pid == t.pid()) {
    captureInFile = false; // the events about to join it are in no file
    return *capture;
  }
  std::unique_ptr<Capture> fresh = newCapture(t);
  captureStartNs = monotonicNs();
  fresh->modules = t.modules();
  if (!fresh->modules.empty())
    fresh->header.program = fresh->modules.front().path;
  replaceCapture(std::move(fresh), "live");
  return *capture;
}

SamplingPlan Session::Impl::samplingPlan(const ParsedCommand &cmd, SamplingPlan plan) const {
  plan.hz = cmd.number("frequency", plan.hz, 1, 10000);
  plan.maxSlowdown = cmd.number("overhead", 100 * plan.maxSlowdown, 1, 1000) / 100;
  plan.depth = static_cast<unsigned>(cmd.whole("stack", plan.depth, 1, 64));
  if (std::optional<uint64_t> duration = cmd.duration("duration"))
    plan.duration = duration;
  if (cmd.has("samples"))
    plan.sampleLimit = cmd.whole("samples", 0, 1, 1000000000);
  if (cmd.has("output"))
    plan.output = cmd.get("output");
  return plan;
}

void Session::Impl::arm(const SamplingPlan &plan) {
  if (live)
    throw Failure("sampling is already running; 'strobe stop' ends it");
  Target &t = process();
  if (t.isRunning())
    throw Failure("the process is running; interrupt it first, then start strobe");
  if (!t.isHostProcess())
    throw Failure("the process is not visible from this host; strobe needs the inferior on the "
                  "machine the debugger runs on (local, or gdbserver/lldb-server on localhost)");
  double hz = plan.hz;
  unsigned depth = plan.depth;

  // Heap tracking in progress: the samples join its capture, on its clock.
  bool joining = tracker && tracker->active() && capture;
  std::unique_ptr<Capture> fresh = joining ? nullptr : newCapture(t);
  Capture &c = joining ? *capture : *fresh;
  c.header.periodNs = static_cast<uint64_t>(1e9 / hz);
  c.header.stackDepth = depth;

  auto next = std::make_unique<LiveCapture>(t, c, depth);
  next->sampler.refreshModules();
  if (!c.modules.empty())
    c.header.program = c.modules.front().path;
  if (plan.output) {
    next->output = std::make_unique<TraceWriter>(*plan.output);
    next->output->writeHeader(c.header);
  }
  next->sampleLimit = plan.sampleLimit;
  next->maxSlowdown = plan.maxSlowdown;
  next->blocking = plan.blocking;
  stopWatch.reset(); // the sampling arming reports every stop from now on
  next->signo = sampleSignal(t.isEmulated());
  next->arming = t.arm(*session, next->signo);
  next->oneThread = next->arming->stopsOneThread();
  next->timer = std::make_unique<SignalTimer>(
      SignalTimer::Config{t.pid(), next->signo, c.header.periodNs, 0.1, plan.duration,
                          plan.maxSlowdown, next->oneThread});
  next->stopsBefore = c.stops;
  if (joining) {
    next->startNs = captureStartNs;
  } else {
    replaceCapture(std::move(fresh), "live");
    captureStartNs = next->startNs;
  }
  captureInFile = next->output != nullptr;
  latencyNs = readNs = routineStops = 0;
  blockedNote.clear();
  endMessage.clear();
  live = std::move(next);
}

// Said while and after sampling when the rate stayed below the one asked, with the reason: the
// timer stretched the period to hold the program's slowdown within --overhead, or the stops
// themselves (signal, stop, resume) took longer than a period. Without it a user who asked for
// 1000 Hz and got 240 would not know why, nor what buys more samples. (Not before 20 stops: the
// time since the last one, up to a period, would weigh too much in the mean.)
static std::string pacingNote(const LiveCapture &live, uint64_t askedPeriodNs, uint64_t now) {
  const uint64_t reached = live.reachedPeriodNs(now);
  const double asked = 1e9 / static_cast<double>(askedPeriodNs);
  const double rate = 1e9 / static_cast<double>(reached);
  if (live.stopsTaken() < 20 || rate >= 0.9 * asked)
    return {};
  // Pacing's doing when it held the signals back for most of the time the rate lost.
  if (2 * static_cast<double>(live.timer->pacingHeldNs()) >=
      live.roundsTaken() * static_cast<double>(reached - std::min(reached, askedPeriodNs)))
    return fmt::format("{:.0f} Hz of the {:.0f} Hz asked: the stops were slow, and --overhead "
                       "{:g} % paced them (a higher --overhead buys more samples)",
                       rate, asked, 100 * live.maxSlowdown);
  return fmt::format("{:.0f} Hz of the {:.0f} Hz asked: signal, stop and resume took longer than "
                     "a period (a busy machine or a slow debugger; 'strobe status' shows the cost "
                     "per stop)",
                     rate, asked);
}

// Said when the program kept the sample signal blocked in every thread (sigprocmask): no stop,
// so no sample, could be made meanwhile, and the capture would otherwise just look empty.
static std::string blockedSignalNote(const LiveCapture &live, bool ending) {
  const uint64_t blocked = live.timer->blockedNs();
  if (live.timer->blockedNow() && !ending)
    return fmt::format("no sample for {}: every thread of the program blocks strobe's sample "
                       "signal {}; sampling goes on when one unblocks it",
                       formatDuration(blocked), signalName(live.signo));
  if (blocked == 0)
    return {};
  return fmt::format("for {} every thread of the program blocked strobe's sample signal {}: no "
                     "samples then",
                     formatDuration(blocked), signalName(live.signo));
}

// Said when the program stood stopped for long during the capture, waiting on the debugger: not
// resumed yet, or at a sample stop not handled yet, as when a script keeps GDB busy (`shell sleep
// 5`, a Python sleep) on the thread that runs the program. The capture would otherwise just look
// empty.
static std::string waitingNote(const LiveCapture &live) {
  constexpr uint64_t kLongWaitNs = 1'000'000'000;
  const uint64_t waited = live.timer->heldNs() + live.timer->unansweredNs();
  if (waited < kLongWaitNs)
    return {};
  return fmt::format("for {} the program stood stopped, waiting on the debugger, and no samples "
                     "were taken: the debugger runs it and handles strobe's stops while it waits "
                     "at its prompt or in 'continue', not while another command (such as "
                     "'shell sleep' or a Python sleep) keeps it busy; for a script, 'strobe "
                     "record --duration' samples a set time",
                     formatDuration(waited));
}

void Session::Impl::finish(const std::string &reason) {
  if (!live)
    return;
  std::unique_ptr<LiveCapture> ending = std::move(live);
  uint64_t now = monotonicNs();
  const std::string pacing = pacingNote(*ending, capture->header.periodNs, now);
  const uint64_t reached = ending->reachedPeriodNs(now);
  bool signalPending = ending->timer->signalOutstanding();
  blockedNote = blockedSignalNote(*ending, true);
  const std::string waiting = waitingNote(*ending);
  ending->timer.reset();
  if (signalPending)
    ending->arming->keepSignalSilent();
  ending->arming.reset();
  if (tracker && tracker->active() && target->hasProcess())
    stopWatch = target->arm(*session, 0); // heap tracking goes on: its exit must still be seen
  Capture &c = *capture;
  c.durationNs = now - ending->startNs;
  // The period the samples stand for turns sample counts into time.
  if (reached)
    c.header.periodNs = reached;
  c.endReason = reason;
  // After an exit the front-end symbolizes from the modules it saw; what it cannot stays unnamed.
  ending->checkpoint();
  std::string outputNote;
  if (ending->output) {
    ending->output->writeEnd(c);
    ending->output->close();
    outputNote = "; streamed to the trace file";
  }
  endMessage = fmt::format("strobe: sampling ended: {}; {} of {} in {} kept "
                           "(see 'strobe profile')",
                           reason, plural(c.samples.size(), "sample"),
                           plural(c.threads.size(), "thread"), formatDuration(c.durationNs)) +
               outputNote + (pacing.empty() ? "" : "; " + pacing) +
               (blockedNote.empty() ? "" : "; " + blockedNote) +
               (waiting.empty() ? "" : "; " + waiting);
}

// A stop that ends the program the process ran (an exit or an exec), or that a debugger user
// calls a crash.
static bool endsTheProgram(const StopEvent &event) {
  if (event.kind == StopEvent::Kind::Exited || event.kind == StopEvent::Kind::Exec)
    return true;
  static const int crashes[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
  return event.kind == StopEvent::Kind::Signal &&
         std::find(std::begin(crashes), std::end(crashes), event.signo) != std::end(crashes);
}

std::string Session::Impl::heapAtProgramEnd(const StopEvent &event) {
  if (!tracker || !endsTheProgram(event))
    return {};
  std::string text = heapTablesAtEnd(describeStop(event));
  // The new program's code is where the hooks were; the heap they watched is gone.
  if (event.kind == StopEvent::Kind::Exited || event.kind == StopEvent::Kind::Exec)
    endHeapTracking();
  return text;
}

uint64_t Session::Impl::sampleStop(const StopEvent &event) {
  uint64_t begin = monotonicNs();
  if (auto latency = live->timer->acknowledge(event.tid))
    latencyNs += *latency;
  size_t first = capture->samples.size();
  if (live->oneThread && event.tid)
    live->sampler.sampleThread(event.tid, begin - live->startNs);
  else
    live->sampler.sampleAllThreads(begin - live->startNs);
  for (size_t i = first; i < capture->samples.size(); ++i)
    profile.add(capture->samples[i]);
  if (live->afterSamples)
    live->afterSamples(first);
  ++capture->stops;
  uint64_t end = monotonicNs();
  readNs += end - begin;
  return end;
}

bool Session::Impl::takeRoutineSample(const StopEvent &event) {
  // Not the capture's last stop (a duration or a sample count reached), nor one due to symbolize
  // (which asks the debugger about code), nor one whose `strobe loop` hook reads the program.
  bool routine = live && event.kind == StopEvent::Kind::Signal && event.signo == live->signo &&
                 !live->afterSamples && !live->timer->finalRequested() &&
                 !(live->sampleLimit && capture->stops + 1 >= *live->sampleLimit) &&
                 monotonicNs() - live->lastSymbolizeNs < kSymbolizeEveryNs - kRoutineMarginNs;
  if (!routine)
    return false;
  sampleStop(event);
  ++routineStops;
  live->timer->resumed();
  return true;
}

Verdict Session::Impl::onStop(const StopEvent &event) {
  if (event.kind == StopEvent::Kind::Exec) {
    // What is still to be named ran in the program the debugger has just let go of.
    if (live)
      live->sampler.programReplaced();
    if (tracker)
      tracker->programReplaced();
  }
  // A step's stop comes back to the step command, which prints what it prints after the trace
  // (GDB reports it from inside its stepi, whose output is not shown).
  if (tracker && endsTheProgram(event) && !stepping) {
    // The debugger is the surviving observer: say what the heap held before the user looks.
    if (live)
      finish(describeStop(event));
    target->print(heapAtProgramEnd(event));
    return Verdict::HandToUser;
  }
  if (!live)
    return Verdict::HandToUser;
  if (event.kind == StopEvent::Kind::Signal && event.signo == live->signo) {
    // Every sample signal while armed is strobe's: one in flight, or one sent just before the
    // previous capture ended and kept silent for exactly this reason.
    uint64_t end = sampleStop(event);
    if (live->oneThread)
      live->timer->forgetDelivered();
    if (end - live->lastSymbolizeNs >= kSymbolizeEveryNs) {
      if (live->oneThread) // a stop of every thread: what was kept of ended threads goes
        live->sampler.retainListedThreads();
      live->checkpoint();
    }
    live->timer->resumed(); // the rest of this stop is ending the capture or the resume
    if (live->timer->finalRequested() && !live->timer->inFlight()) {
      finish("the duration was reached");
      return Verdict::StopQuietly;
    }
    if (live->sampleLimit && capture->stops >= *live->sampleLimit) {
      finish(fmt::format("{} sample stops were taken", capture->stops));
      return Verdict::StopQuietly;
    }
    return Verdict::Resume;
  }
  bool blocking = live->blocking;
  finish(describeStop(event));
  if (!blocking) // a background capture: nobody waits on it, so say here how it ended
    target->print(endMessage + "\n");
  return Verdict::HandToUser;
}

std::string Session::Impl::status() const {
  if (!capture)
    return "strobe: idle; nothing captured yet\n";
  std::string counts = fmt::format("{}, {}", contents(*capture), plural(capture->stops, "stop"));
  const std::string tracking =
      tracker && tracker->active() ? "; tracking the heap ('strobe mem status')" : "";
  std::string cost;
  // The stop costs are this session's own: a loaded file holds none.
  if (captureOrigin == "live" && capture->stops) {
    cost = fmt::format("; per stop: {:.0f} us from signal to stop, {:.0f} us reading threads",
                       latencyNs / 1e3 / capture->stops, readNs / 1e3 / capture->stops);
    if (routineStops)
      cost += fmt::format("; {} of them on the fast path (read and resumed before the debugger "
                          "handled the stop)",
                          routineStops);
  }
  if (live) {
    std::string pacing = pacingNote(*live, capture->header.periodNs, monotonicNs());
    if (!pacing.empty())
      counts += " (" + pacing + ")";
    if (std::string blocked = blockedSignalNote(*live, false); !blocked.empty())
      counts += " (" + blocked + ")";
    return fmt::format("strobe: sampling pid {} at {:.0f} Hz for {}: {}{}{}\n", capture->header.pid,
                       1e9 / capture->header.periodNs,
                       formatDuration(monotonicNs() - live->startNs), counts, tracking, cost);
  }
  // Stops and a duration belong to sampling: a capture of steps or heap events alone has neither.
  const std::string sampled =
      capture->stops || capture->durationNs
          ? fmt::format("{} over {}", counts, formatDuration(capture->durationNs))
          : contents(*capture);
  return fmt::format(
      "strobe: idle; holding a capture ({}): {}{}{}{}\n", captureOrigin, sampled, tracking,
      capture->endReason.empty() ? "" : "; ended because " + capture->endReason,
      cost + (captureOrigin == "live" && !blockedNote.empty() ? "; " + blockedNote : ""));
}

bool Session::Impl::run(const ParsedCommand &cmd, std::string &out) {
  const std::string &name = cmd.spec->name;
  if (!target && !worksOffline(name))
    throw Failure(fmt::format("'{}' needs a debugger session", name));
  out += replantHeapHooks();

  if (name == "help") {
    // Without a debugger (strobe-report) the index lists only what runs on a loaded file.
    std::vector<SubcommandSpec> listed;
    std::ranges::copy_if(subcommands(), std::back_inserter(listed), [&](const SubcommandSpec &s) {
      return target || !cmd.positionals.empty() || worksOffline(s.name);
    });
    // A subcommand that runs only in a debugger is shown as it is typed there.
    const std::string topic = fmt::format("{}", fmt::join(cmd.positionals, " "));
    const bool debuggerOnly = !target && std::ranges::any_of(listed, [&](const SubcommandSpec &s) {
      return s.name == topic && !worksOffline(s.name);
    });
    out += helpTopic(listed, cmd.positionals, debuggerOnly ? kInDebugger : invocation());
    if (debuggerOnly)
      out += "\nThis runs inside LLDB or GDB; strobe-report reads the trace files it saves.\n";
    return true;
  }
  if (name == "start") {
    arm(samplingPlan(cmd, {}));
    out += fmt::format("strobe: sampling pid {} at {:.0f} Hz; 'strobe stop' ends it\n",
                       capture->header.pid, 1e9 / capture->header.periodNs);
    if (!cmd.has("no-resume"))
      target->resumeInBackground();
    return true;
  }
  if (name == "record") {
    arm(samplingPlan(cmd, {.blocking = true}));
    StopEvent last = target->runUntilUserStop();
    if (live) // the front-end returned without the session deciding: end the capture here
      finish(describeStop(last));
    out += endMessage + "\n";
    return true;
  }
  if (name == "stop") {
    if (!session->endCapture("'strobe stop' was given", out))
      throw Failure("sampling is not running");
    return true;
  }
  if (name == "dump") {
    DumpOptions options;
    options.format = cmd.has("tenet") ? DumpFormat::Tenet : DumpFormat::Text;
    if (cmd.has("thread"))
      options.tid = cmd.whole("thread", 0, 0, 1000000000000);
    std::optional<LoadedTrace> loaded;
    if (!cmd.positionals.empty()) {
      loaded = loadCapture(cmd.positionals[0]);
      for (const std::string &w : loaded->warnings)
        out += "warning: " + w + "\n";
    } else if (!capture) {
      throw Failure(
          "nothing captured yet; use 'strobe step', 'strobe record' or 'strobe load FILE'");
    }
    const Capture &dumped = loaded ? loaded->capture : *capture;
    out += printOrWrite(
        cmd, [&](const TextSink &sink) { writeDump(dumped, options, sink); }, "line");
    return true;
  }
  if (name.starts_with("mem ")) {
    memory(cmd, out);
    return true;
  }
  if (name == "step") {
    step(cmd, out);
    return true;
  }
  if (name == "loop") {
    loop(cmd, out);
    return true;
  }
  if (name == "status") {
    out += status();
    return true;
  }
  if (name == "profile") {
    ProfileOptions options;
    std::string by = cmd.get("by", "function");
    options.by = by == "process"       ? ProfileOptions::By::Process
                 : by == "thread"      ? ProfileOptions::By::Thread
                 : by == "module"      ? ProfileOptions::By::Module
                 : by == "line"        ? ProfileOptions::By::Line
                 : by == "instruction" ? ProfileOptions::By::Instruction
                                       : ProfileOptions::By::Function;
    if (cmd.has("cpu") && cmd.has("wall"))
      throw UsageError("--cpu and --wall exclude each other");
    options.callers = cmd.has("callers");
    if (options.callers && options.by != ProfileOptions::By::Function)
      throw UsageError("--callers lists the callers of functions; it goes with --by function");
    options.onCpuOnly = cmd.has("cpu");
    if (cmd.has("thread"))
      options.tid = cmd.whole("thread", 0, 0, 1000000000000);
    options.top = cmd.whole("top", 25, 1, 1000000);
    profileFormat(cmd, options);
    const Capture &reported = captureForReport();
    const std::string report = renderProfile(reported, profile, options);
    using Format = ProfileOptions::Format;
    if (options.format == Format::Pprof) {
      writeFile(cmd.get("output"), report);
      out += fmt::format("strobe: wrote a pprof profile of {} to {}; 'pprof -http=: {}' shows it\n",
                         plural(profile.count({options.onCpuOnly, options.tid}), "sample"),
                         cmd.get("output"), cmd.get("output"));
    } else {
      out += printOrWrite(cmd, report, options.format == Format::Folded ? "stack" : "line");
    }
    if (options.wholeStacks() && cmd.has("output") && reported.header.stackDepth <= 2)
      out += fmt::format("strobe: the capture kept {} frames per stack; record with --stack 32 "
                         "for stacks that reach main\n",
                         reported.header.stackDepth);
    return true;
  }
  if (name == "annotate") {
    if (cmd.has("asm") && cmd.has("source"))
      throw UsageError("--asm and --source exclude each other");
    AnnotateOptions options;
    options.function = cmd.positionals[0];
    options.source = cmd.has("source");
    options.assembly = !options.source;
    options.onCpuOnly = cmd.has("cpu");
    out += renderAnnotate(captureForReport(), profile, options);
    return true;
  }
  if (name == "save") {
    if (live)
      throw Failure("sampling is running; 'strobe stop' first");
    if (!capture)
      throw Failure("nothing captured yet; there is nothing to save");
    saveCapture(cmd.positionals[0], *capture);
    captureInFile = true;
    out += fmt::format("strobe: saved {} to {}\n", contents(*capture), cmd.positionals[0]);
    return true;
  }
  if (name == "load") {
    if (live)
      throw Failure("sampling is running; 'strobe stop' first");
    LoadedTrace loaded = loadCapture(cmd.positionals[0]);
    for (const std::string &w : loaded.warnings)
      out += "warning: " + w + "\n";
    replaceCapture(std::make_unique<Capture>(std::move(loaded.capture)), cmd.positionals[0]);
    for (const Sample &sample : capture->samples)
      profile.add(sample);
    out += fmt::format("strobe: loaded {} from {}\n", contents(*capture), cmd.positionals[0]);
    return true;
  }
  throw Failure(fmt::format("'{}' is not implemented", name));
}

Session::Session(Target *target, std::string debuggerName) : impl_(std::make_unique<Impl>()) {
  impl_->target = target;
  impl_->debugger = std::move(debuggerName);
  impl_->session = this;
}

Session::~Session() {
  if (impl_->live && impl_->target && impl_->target->hasProcess())
    impl_->finish("the debugger session ended");
  impl_->endHeapTracking();
}

bool Session::execute(std::string_view args, std::string &out) {
  try {
    ParsedCommand cmd = parseCommand(subcommands(), splitWords(args), impl_->invocation());
    return impl_->run(cmd, out);
  } catch (const std::exception &e) {
    out += fmt::format("error: {}\n", e.what());
    return false;
  }
}

bool Session::takeRoutineSample(const StopEvent &event) {
  try {
    return impl_->takeRoutineSample(event);
  } catch (const std::exception &) {
    return false; // onStop() takes the stop again and ends the capture with the reason
  }
}

bool Session::endCapture(const std::string &reason, std::string &out) {
  if (!impl_->live)
    return false;
  impl_->finish(reason);
  out += impl_->endMessage + "\n";
  return true;
}

void Session::beforeUserResume() {
  try {
    if (std::string said = impl_->replantHeapHooks(); !said.empty())
      impl_->target->print(said);
  } catch (const std::exception &e) {
    impl_->target->print(fmt::format("strobe: {}\n", e.what()));
  }
}

Verdict Session::onStop(const StopEvent &event) {
  // Called from inside the debugger's stop handling: nothing may escape into it.
  try {
    return impl_->onStop(event);
  } catch (const std::exception &e) {
    impl_->finish(fmt::format("strobe failed at a stop: {}", e.what()));
    if (impl_->target)
      impl_->target->print(impl_->endMessage + "\n");
    return Verdict::HandToUser;
  }
}

// qemu-user hands a host real-time signal to the program under another number, and the mapping
// changed in QEMU 5.1, 7.x and 9.2 (host SIGRTMAX-1 arrives as 61 in 7.2); standard signals keep
// their numbers. SIGPWR: one both GDB and LLDB name, that qemu's gdbstub reports, and that
// programs seldom use.
int Session::sampleSignal(bool emulated) { return emulated ? SIGPWR : SIGRTMAX - 1; }

} // namespace strobe
