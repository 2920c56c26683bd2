// `strobe step`: an exact instruction trace of the selected thread (spec 001's records).
#include "capture/Stepper.h"
#include "command/SessionImpl.h"
#include "native/ProcessModules.h"
#include "report/Dump.h"
#include "report/ProfileReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strobe {
namespace {

// `strobe step --until` without --count: a bound, so a location never reached does not step
// forever.
constexpr uint64_t kStepUntilLimit = 1'000'000;

// The names as a list, each run of one name numbered on by one written first-last: "v0-v31, fpsr".
std::string registerRuns(const std::vector<std::string> &names) {
  struct Numbered {
    std::string prefix, suffix;
    unsigned long number;
  };
  auto numbered = [](const std::string &name) -> std::optional<Numbered> {
    const size_t digits = name.find_first_of("0123456789");
    if (digits == name.npos)
      return std::nullopt;
    const size_t after = std::min(name.find_first_not_of("0123456789", digits), name.size());
    return Numbered{name.substr(0, digits), name.substr(after),
                    std::stoul(name.substr(digits, after - digits))};
  };
  std::string out;
  for (size_t first = 0, end; first < names.size(); first = end) {
    const std::optional<Numbered> head = numbered(names[first]);
    for (end = first + 1; head && end < names.size(); ++end) {
      const std::optional<Numbered> next = numbered(names[end]);
      if (!next || next->prefix != head->prefix || next->suffix != head->suffix ||
          next->number != head->number + (end - first))
        break;
    }
    out += (out.empty() ? "" : ", ") + names[first] +
           (end - first > 1 ? "-" + names[end - 1] : std::string());
  }
  return out;
}

} // namespace

void Session::Impl::step(const ParsedCommand &cmd, std::string &out) {
  Target &t = process();
  if (live)
    throw Failure("sampling is running; 'strobe stop' it before stepping");
  if (t.isRunning())
    throw Failure("the process is running; interrupt it first, then step");
  StepRequest request;
  request.tid = t.currentThread();
  request.memory = cmd.has("memory");
  request.count = cmd.whole("count", 1000, 1, 1000000000);
  if (cmd.has("until")) {
    std::vector<uint64_t> addresses = t.resolve(cmd.get("until"));
    // An address with no code (a typo, *0) could only be reached by a crash: not a place to stop.
    std::erase_if(addresses, [&t](uint64_t address) { return t.readMemory(address, 1).empty(); });
    if (addresses.empty())
      throw Failure(fmt::format("no code at '{}'; give a FUNCTION, FILE:LINE or *ADDRESS (a "
                                "library not loaded yet has none: a breakpoint there, which "
                                "waits for it, ends the trace)",
                                cmd.get("until")));
    request.until.insert(addresses.begin(), addresses.end());
    if (!cmd.has("count"))
      request.count = kStepUntilLimit;
  }
  // A thread parked in a system call (a read, a sleep, a lock) makes its first step only when the
  // call returns, which may be never: say so before the wait, not after it.
  if (std::optional<unsigned> nr = registerTable(t.isa()).syscallNr) {
    ThreadSnapshot now;
    if (t.readThread(request.tid, 1, now) && *nr < now.regs.size() &&
        static_cast<int64_t>(now.regs[*nr]) >= 0)
      t.print(fmt::format("strobe: thread {} is inside system call {}; the first step waits until "
                          "it returns (Ctrl-C ends stepping)\n",
                          request.tid, now.regs[*nr]));
  }
  request.progress = [&t](uint64_t n) {
    t.print(fmt::format("strobe: {} instructions stepped...\n", n));
  };
  if (t.isHostProcess() && !t.isEmulated())
    if (std::optional<std::pair<uint64_t, uint64_t>> vdso = ProcessModules(t.pid(), {}).vdso()) {
      request.vdso = *vdso;
      request.stuckInVdso = [&t](bool runOut) {
        t.print(fmt::format(
            "strobe: the thread has made {} steps in a row inside the kernel's vDSO: a clock read "
            "retries while the clock's data changes under it, which a single-stepped thread may "
            "never outrun (on a VM whose clock ticks faster than it steps); {}\n",
            kVdsoPatience,
            runOut ? "strobe runs each such call to its return unstepped, a gap in the trace"
                   : "Ctrl-C ends the trace and keeps it ('finish' out of the call, then trace "
                     "on)"));
      };
    }
  // The trace joins the capture of this process (heap events, say) while the process is there
  // to tell: after an exit no pid matches it.
  Capture &c = captureForEvents(t);
  request.recordedPcs = [&t, &c](std::span<const uint64_t> pcs) {
    for (uint64_t pc : pcs)
      if (!c.symbols.count(pc))
        c.symbols.emplace(pc, t.symbolize(pc));
  };
  Stepper stepper(t);
  StepOutcome outcome = [&] {
    stepping = true;
    const std::unique_ptr<bool, void (*)(bool *)> notStepping(&stepping,
                                                              [](bool *flag) { *flag = false; });
    return stepper.run(request);
  }();
  // An exit or an exec in the words every capture uses, not each debugger's own.
  if (outcome.userStop && (outcome.userStop->kind == StopEvent::Kind::Exited ||
                           outcome.userStop->kind == StopEvent::Kind::Exec))
    outcome.endReason = describeStop(*outcome.userStop);
  if (!request.until.empty() && outcome.countReached)
    outcome.endReason = fmt::format("{} was not reached in {}{}", cmd.get("until"),
                                    plural(request.count, "instruction"),
                                    cmd.has("count") ? "" : " (--count raises the limit)");
  const uint64_t stepped = outcome.instructions();
  c.stepTraces.push_back(std::move(outcome.trace));
  const StepTrace &trace = c.stepTraces.back();
  if (!cmd.has("quiet"))
    out += renderStepTrace(c, trace);
  if (!outcome.absentExtended.empty())
    out += fmt::format("strobe: this target has no {}: the trace holds 0 for {}\n",
                       registerRuns(outcome.absentExtended),
                       outcome.absentExtended.size() > 1 ? "them" : "it");
  out += fmt::format(
      "strobe: stepped {} of thread {} in {} ({:.0f} us each){}{}{}; {}; 'strobe "
      "dump' prints it, 'strobe save' keeps it\n",
      plural(stepped, "instruction"), trace.tid(), formatDuration(outcome.durationNs),
      stepped ? outcome.durationNs / 1e3 / stepped : 0.0,
      outcome.unpredictedMemory
          ? fmt::format(" ({} with memory accesses strobe cannot name)", outcome.unpredictedMemory)
          : "",
      outcome.moves ? fmt::format(", moved {} by the system (a signal's delivery: '(after a gap)' "
                                  "in the dump)",
                                  plural(outcome.moves, "time"))
                    : "",
      outcome.runsOut ? fmt::format(", ran {} unstepped out of the vDSO ('(after a gap)' in the "
                                    "dump)",
                                    plural(outcome.runsOut, "clock read"))
                      : "",
      outcome.endReason);
  if (outcome.userStop)
    out += heapAtProgramEnd(*outcome.userStop);
}

} // namespace strobe
