// `strobe mem start | stop | table | leaks | status`: heap accounting with breakpoints on the
// allocator (spec 003). Events join the session's capture, next to samples and step traces.
#include "capture/AllocTracker.h"
#include "command/SessionImpl.h"
#include "report/MemoryReport.h"

#include <fmt/format.h>
#include <sstream>

namespace strobe {
namespace {

std::vector<std::string> commaList(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty())
      items.push_back(item);
  return items;
}

} // namespace

MemoryAnalysisOptions Session::Impl::memoryAnalysis(const ParsedCommand &cmd) const {
  MemoryAnalysisOptions options;
  std::string by = cmd.get("by", "library");
  options.attribution.by = by == "function" ? KeyBy::Function
                           : by == "thread" ? KeyBy::Thread
                                            : KeyBy::Library;
  std::string mode = cmd.get("attribution", "first");
  options.attribution.mode = mode == "last"  ? AttributionMode::Last
                             : mode == "all" ? AttributionMode::All
                                             : AttributionMode::First;
  for (const std::string &f : transparent)
    options.attribution.transparent.push_back(f);
  options.frees = cmd.get("frees", "callsite") == "owner" ? FreesMode::Owner : FreesMode::CallSite;
  return options;
}

const Capture &Session::Impl::captureWithHeapEvents() {
  if (tracker && target && target->hasProcess() && !target->isRunning())
    tracker->symbolizePending();
  if (!capture || capture->allocEvents.empty())
    throw Failure(capture ? "the capture holds no heap events; 'strobe mem start' records them"
                          : "nothing captured yet; 'strobe mem start', then continue the process");
  return *capture;
}

void Session::Impl::memory(const ParsedCommand &cmd, std::string &out) {
  const std::string &name = cmd.spec->name;
  if (name == "mem start") {
    Target &t = process();
    if (tracker && tracker->active())
      throw Failure("heap tracking is already on; 'strobe mem stop' ends it");
    if (t.isRunning())
      throw Failure("the process is running; interrupt it first, then 'strobe mem start'");
    AllocTrackerOptions options;
    options.mmap = cmd.has("mmap");
    options.stackDepth = static_cast<unsigned>(cmd.whole("stack", 16, 1, 256));
    options.functions = commaList(cmd.get("functions"));
    transparent = commaList(cmd.get("transparent"));
    Capture &c = captureForEvents(t);
    auto next = std::make_unique<AllocTracker>(t, c, options,
                                               [this] { return monotonicNs() - captureStartNs; });
    next->start();
    if (!next->active())
      throw Failure("no allocation function could be hooked: " + renderMemoryStatus(*next));
    tracker = std::move(next);
    if (!live)
      stopWatch = t.arm(*session, 0); // an exit or crash prints the tables
    out += renderMemoryStatus(*tracker);
    out += "strobe: tracking the heap; continue the process, then 'strobe mem table' at any stop\n";
    return;
  }
  if (name == "mem stop") {
    if (!tracker || !tracker->active())
      throw Failure("heap tracking is not on");
    endHeapTracking();
    out += fmt::format("strobe: heap tracking ended; {} events kept (see 'strobe mem table')\n",
                       capture ? capture->allocEvents.size() : 0);
    return;
  }
  if (name == "mem status") {
    if (tracker)
      out += renderMemoryStatus(*tracker);
    else if (capture && !capture->allocEvents.empty())
      out += fmt::format("strobe: not tracking the heap; the capture ({}) holds {} heap events\n",
                         captureOrigin, capture->allocEvents.size());
    else
      out += "strobe: not tracking the heap; 'strobe mem start' begins\n";
    return;
  }
  if (name == "mem table") {
    MemoryTableOptions options;
    options.analysis = memoryAnalysis(cmd);
    options.perInvocation = cmd.has("per");
    options.intervalNs = cmd.duration("interval");
    if (options.perInvocation && options.intervalNs)
      throw UsageError("--per invocation and --interval exclude each other");
    if (cmd.has("sort")) {
      std::optional<MemoryColumn> column = memoryColumnFromName(cmd.get("sort"));
      if (!column)
        throw UsageError(
            fmt::format("--sort takes a column: key size min max malloc realloc free "
                        "memalign allocated freed blocks live peak untracked, not '{}'",
                        cmd.get("sort")));
      options.sort = *column;
    }
    options.json = cmd.has("json");
    out += renderMemoryTable(captureWithHeapEvents(), options);
    return;
  }
  if (name == "mem leaks") {
    LeakOptions options;
    options.analysis = memoryAnalysis(cmd);
    options.top = cmd.whole("top", 10, 1, 1000000);
    options.json = cmd.has("json");
    out += renderLeaks(captureWithHeapEvents(), options);
    return;
  }
  throw Failure(fmt::format("'{}' is not implemented", name));
}

void Session::Impl::endHeapTracking() {
  if (!tracker)
    return;
  // After an exit the front-end still names what it can from the modules it saw.
  if (target && !target->isRunning())
    tracker->symbolizePending();
  tracker->stop();
  tracker.reset();
  stopWatch.reset();
}

std::string Session::Impl::replantHeapHooks() {
  if (!tracker || !tracker->active() || !target || !target->hasProcess() || target->isRunning())
    return {};
  const size_t planted = tracker->replantDeleted();
  if (planted == 0)
    return {};
  return fmt::format("strobe: a debugger command deleted {} of strobe's heap breakpoints; planted "
                     "again (a heap call made while they were gone is not counted)\n",
                     planted);
}

std::string Session::Impl::heapTablesAtEnd(const std::string &why) {
  std::string text = fmt::format("strobe: {}; the heap as strobe saw it:\n", why);
  if (size_t deleted = tracker ? tracker->deletedBreakpoints() : 0)
    text += fmt::format("warning: a debugger command deleted {} of strobe's heap breakpoints; the "
                        "heap calls made after that are missing from these tables\n",
                        deleted);
  try {
    MemoryTableOptions table;
    text += renderMemoryTable(*capture, table);
    LeakOptions leaks;
    text += renderLeaks(*capture, leaks);
  } catch (const std::exception &e) {
    text += fmt::format("strobe: no heap table: {}\n", e.what());
  }
  return text;
}

} // namespace strobe
