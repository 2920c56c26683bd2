#include "command/Session.h"

#include "analysis/Profile.h"
#include "capture/Sampler.h"
#include "capture/SignalTimer.h"
#include "command/Commands.h"
#include "io/TraceFile.h"
#include "report/Annotate.h"
#include "report/ProfileReport.h"

#include <chrono>
#include <fmt/format.h>
#include <signal.h>

namespace strobe {
namespace {

constexpr double kDefaultFrequency = 199; // prime, so it does not beat with round-number periods
constexpr uint64_t kSymbolizeEveryNs = 1'000'000'000;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string plural(uint64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
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
    return fmt::format("the process received signal {}", event.signo);
  case StopEvent::Kind::Other:
    break;
  }
  return event.description.empty() ? "the process stopped"
                                   : "the process stopped: " + event.description;
}

} // namespace

// A capture being taken: the timer, the debugger settings it changed, and the sampler.
struct LiveCapture {
  Capture &capture;
  std::unique_ptr<Arming> arming;
  Sampler sampler;
  // Started only once the debugger is armed: a sample signal must never reach an unarmed inferior,
  // whose default action for it is to die.
  std::unique_ptr<SignalTimer> timer;
  std::unique_ptr<TraceWriter> output; // --output: the capture streams to disk as it runs
  size_t samplesWritten = 0;
  uint64_t startNs = monotonicNs();
  uint64_t lastSymbolizeNs = startNs;
  std::optional<uint64_t> sampleLimit;
  bool blocking = false; // 'strobe record' waits on it and reports how it ended

  LiveCapture(Target &target, Capture &c, unsigned depth) : capture(c), sampler(target, c, depth) {}

  // Symbolizes what the last second brought and streams its samples out, so that a debugger that
  // dies mid-capture leaves a trace file holding all but the last second.
  void checkpoint() {
    sampler.symbolizePending();
    if (output) {
      output->writeSamples(std::span(capture.samples).subspan(samplesWritten));
      samplesWritten = capture.samples.size();
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
  std::unique_ptr<LiveCapture> live;
  std::string endMessage; // how the last live capture ended, for the command that waits on it
  // What strobe's own stops cost in the last live capture (the debugger's share is the rest).
  uint64_t latencyNs = 0; // signal sent -> stop reported to the engine, summed
  uint64_t readNs = 0;    // reading every thread at a stop, summed

  bool run(const ParsedCommand &cmd, std::string &out);

  Target &process() {
    if (!target || !target->hasProcess())
      throw Failure("no process; launch or attach to one first (strobe samples a running process)");
    return *target;
  }
  const Capture &captureForReport() const {
    if (!capture || capture->samples.empty())
      throw Failure(
          capture
              ? "the capture holds no samples"
              : "nothing captured yet; use 'strobe record', 'strobe start' or 'strobe load FILE'");
    return *capture;
  }

  void arm(const ParsedCommand &cmd, std::optional<uint64_t> duration, bool blocking);
  void finish(const std::string &reason);
  Verdict onStop(const StopEvent &event);
  std::string status() const;
};

void Session::Impl::arm(const ParsedCommand &cmd, std::optional<uint64_t> duration, bool blocking) {
  if (live)
    throw Failure("sampling is already running; 'strobe stop' ends it");
  Target &t = process();
  if (t.isRunning())
    throw Failure("the process is running; interrupt it first, then start strobe");
  if (!t.isHostProcess())
    throw Failure("the process is not visible from this host; strobe needs the inferior on the "
                  "machine the debugger runs on (local, or gdbserver/lldb-server on localhost)");
  double hz = cmd.number("frequency", kDefaultFrequency, 1, 10000);
  unsigned depth = static_cast<unsigned>(cmd.number("stack", 2, 1, 64));

  auto fresh = std::make_unique<Capture>();
  fresh->header.isa = t.isa();
  fresh->header.pid = t.pid();
  fresh->header.debugger = debugger;
  fresh->header.periodNs = static_cast<uint64_t>(1e9 / hz);
  fresh->header.stackDepth = depth;
  fresh->header.startUnixNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  std::optional<uint64_t> sampleLimit;
  if (cmd.has("samples"))
    sampleLimit = static_cast<uint64_t>(cmd.number("samples", 0, 1, 1e9));

  auto next = std::make_unique<LiveCapture>(t, *fresh, depth);
  next->sampler.refreshModules();
  if (!fresh->modules.empty())
    fresh->header.program = fresh->modules.front().path;
  if (cmd.has("output")) {
    next->output = std::make_unique<TraceWriter>(cmd.get("output"));
    next->output->writeHeader(fresh->header);
  }
  next->sampleLimit = sampleLimit;
  next->blocking = blocking;
  next->arming = t.arm(*session, sampleSignal());
  next->timer = std::make_unique<SignalTimer>(
      SignalTimer::Config{t.pid(), sampleSignal(), fresh->header.periodNs, 0.1, duration});
  capture = std::move(fresh);
  profile = Profile();
  latencyNs = readNs = 0;
  captureOrigin = "live";
  endMessage.clear();
  live = std::move(next);
}

void Session::Impl::finish(const std::string &reason) {
  if (!live)
    return;
  std::unique_ptr<LiveCapture> ending = std::move(live);
  bool signalPending = ending->timer->inFlight();
  ending->timer.reset();
  if (signalPending)
    ending->arming->keepSignalSilent();
  ending->arming.reset();
  Capture &c = *capture;
  c.durationNs = monotonicNs() - ending->startNs;
  c.endReason = reason;
  // After an exit the front-end symbolizes from the modules it saw; what it cannot stays unnamed.
  ending->checkpoint();
  std::string outputNote;
  if (ending->output) {
    ending->output->writeEnd(c);
    ending->output->close();
    outputNote = "; streamed to the trace file";
  }
  endMessage = fmt::format("strobe: sampling ended: {}; {} samples of {} in {} kept "
                           "(see 'strobe profile')",
                           reason, c.samples.size(), plural(c.threads.size(), "thread"),
                           formatDuration(c.durationNs)) +
               outputNote;
}

Verdict Session::Impl::onStop(const StopEvent &event) {
  if (!live)
    return Verdict::HandToUser;
  if (event.kind == StopEvent::Kind::Signal && event.signo == sampleSignal()) {
    // Every sample signal while armed is strobe's: one in flight, or one sent just before the
    // previous capture ended and kept silent for exactly this reason.
    uint64_t begin = monotonicNs();
    if (auto latency = live->timer->acknowledge())
      latencyNs += *latency;
    size_t first = capture->samples.size();
    live->sampler.sampleAllThreads(begin - live->startNs);
    for (size_t i = first; i < capture->samples.size(); ++i)
      profile.add(capture->samples[i]);
    ++capture->stops;
    uint64_t end = monotonicNs();
    readNs += end - begin;
    if (end - live->lastSymbolizeNs >= kSymbolizeEveryNs)
      live->checkpoint();
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
  std::string counts =
      fmt::format("{} samples, {}, {}", capture->samples.size(),
                  plural(capture->threads.size(), "thread"), plural(capture->stops, "stop"));
  std::string cost;
  if (captureOrigin == "live" && capture->stops)
    cost = fmt::format("; per stop: {:.0f} us from signal to stop, {:.0f} us reading threads",
                       latencyNs / 1e3 / capture->stops, readNs / 1e3 / capture->stops);
  if (live)
    return fmt::format("strobe: sampling pid {} at {:.0f} Hz for {}: {}{}\n", capture->header.pid,
                       1e9 / capture->header.periodNs,
                       formatDuration(monotonicNs() - live->startNs), counts, cost);
  return fmt::format("strobe: idle; holding a capture ({}): {} over {}{}{}\n", captureOrigin,
                     counts, formatDuration(capture->durationNs),
                     capture->endReason.empty() ? "" : "; ended because " + capture->endReason,
                     cost);
}

bool Session::Impl::run(const ParsedCommand &cmd, std::string &out) {
  const std::string &name = cmd.spec->name;
  if (!target && !worksOffline(name))
    throw Failure(fmt::format("'{}' needs a debugger session", name));

  if (name == "help") {
    if (cmd.positionals.empty()) {
      out += helpOverview(subcommands());
      return true;
    }
    for (const SubcommandSpec &s : subcommands())
      if (s.name == cmd.positionals[0]) {
        out += helpFor(s);
        return true;
      }
    throw Failure(fmt::format("no subcommand '{}'; try 'strobe help'", cmd.positionals[0]));
  }
  if (name == "start") {
    arm(cmd, std::nullopt, false);
    out += fmt::format("strobe: sampling pid {} at {:.0f} Hz; 'strobe stop' ends it\n",
                       capture->header.pid, 1e9 / capture->header.periodNs);
    if (!cmd.has("no-resume"))
      target->resumeInBackground();
    return true;
  }
  if (name == "record") {
    std::optional<uint64_t> duration = cmd.duration("duration");
    arm(cmd, duration, true);
    StopEvent last = target->runUntilUserStop();
    if (live) // the front-end returned without the session deciding: end the capture here
      finish(describeStop(last));
    out += endMessage + "\n";
    return true;
  }
  if (name == "stop") {
    if (!live)
      throw Failure("sampling is not running");
    finish("'strobe stop' was given");
    out += endMessage + "\n";
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
    options.onCpuOnly = cmd.has("cpu");
    if (cmd.has("thread"))
      options.tid = static_cast<uint64_t>(cmd.number("thread", 0, 0, 1e12));
    options.top = static_cast<size_t>(cmd.number("top", 25, 1, 1e6));
    options.json = cmd.has("json");
    out += renderProfile(captureForReport(), profile, options);
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
    out += fmt::format("strobe: saved {} samples to {}\n", capture->samples.size(),
                       cmd.positionals[0]);
    return true;
  }
  if (name == "load") {
    if (live)
      throw Failure("sampling is running; 'strobe stop' first");
    LoadedTrace loaded = loadCapture(cmd.positionals[0]);
    for (const std::string &w : loaded.warnings)
      out += "warning: " + w + "\n";
    capture = std::make_unique<Capture>(std::move(loaded.capture));
    profile = Profile();
    for (const Sample &sample : capture->samples)
      profile.add(sample);
    captureOrigin = cmd.positionals[0];
    out += fmt::format("strobe: loaded {} samples of {} from {}\n", capture->samples.size(),
                       plural(capture->threads.size(), "thread"), cmd.positionals[0]);
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
}

bool Session::execute(std::string_view args, std::string &out) {
  try {
    ParsedCommand cmd = parseCommand(subcommands(), splitWords(args));
    return impl_->run(cmd, out);
  } catch (const std::exception &e) {
    out += fmt::format("error: {}\n", e.what());
    return false;
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

int Session::sampleSignal() { return SIGRTMAX - 1; }

} // namespace strobe
