#include "report/ProfileReport.h"

#include "report/Annotate.h"
#include "report/PprofProfile.h"
#include "report/Table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

namespace strobe {

std::string shortName(const std::string &path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.empty() ? path : name;
}

std::string formatDuration(uint64_t ns) {
  struct Unit {
    double scale;
    const char *name;
  };
  static constexpr Unit units[] = {{1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
  if (ns < 1000)
    return fmt::format("{} ns", ns);
  size_t u = 0;
  // Move up a unit when three significant digits would round to 1000 of this one.
  while (u + 1 < std::size(units) && ns >= units[u + 1].scale * 0.9995)
    ++u;
  double value = ns / units[u].scale;
  int decimals = value >= 99.95 ? 0 : value >= 9.995 ? 1 : 2;
  return fmt::format("{:.{}f} {}", value, decimals, units[u].name);
}

namespace {

std::string hex(uint64_t value) { return fmt::format("{:#x}", value); }

// What every report needs besides its rows: the filtered sample count that shares refer to.
struct Context {
  const Capture &capture;
  const Profile &profile;
  const ProfileOptions &options;
  SampleFilter filter;
  uint64_t total;

  size_t shown(size_t rows) const { return options.top == 0 ? rows : std::min(options.top, rows); }
};

// Every row starts with these columns; a view's own columns follow.
constexpr size_t kShareColumns = 4;

std::vector<Table::Column> shareColumns() {
  return {{"samples", "samples"}, {"%", "percent"}, {"±95%", "ci95"}, {"time", "timeNs"}};
}

Cell timeCell(uint64_t samples, uint64_t periodNs) {
  if (periodNs == 0)
    return {"-", ""};
  return {formatDuration(samples * periodNs), json::number(samples * periodNs)};
}

// samples, share of `total`, its 95 % interval (normal approximation of a binomial share),
// estimated time.
std::vector<Cell> shareCells(const Context &ctx, uint64_t samples) {
  double p = static_cast<double>(samples) / ctx.total;
  double ci = 1.96 * std::sqrt(p * (1 - p) / ctx.total);
  return {{fmt::format("{}", samples), json::number(samples)},
          {fmt::format("{:.1f}%", 100 * p), json::number(100 * p, 2)},
          {fmt::format("±{:.1f}", 100 * ci), json::number(100 * ci, 2)},
          timeCell(samples, ctx.capture.header.periodNs)};
}

// The whole filtered profile: 100 % by definition, so no interval.
std::vector<Cell> totalCells(const Context &ctx) {
  std::vector<Cell> cells = shareCells(ctx, ctx.total);
  cells[2] = {};
  return cells;
}

void append(std::vector<Cell> &cells, std::vector<Cell> more) {
  cells.insert(cells.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
}

// A row of `columns` cells holding `label` at `labelColumn` and the share cells first.
Table::Row sharedRow(const Context &ctx, uint64_t samples, size_t columns, size_t labelColumn,
                     Cell label) {
  Table::Row row;
  row.cells = shareCells(ctx, samples);
  row.cells.resize(columns);
  row.cells[labelColumn] = std::move(label);
  return row;
}

// The rows beyond --top, summed, so the table still adds up to its total.
template <class Rows, class SamplesOf>
void setOthers(Table &table, const Context &ctx, const Rows &rows, size_t columns,
               size_t labelColumn, SamplesOf samplesOf) {
  size_t shown = ctx.shown(rows.size());
  if (shown == rows.size())
    return;
  uint64_t samples = 0;
  for (size_t i = shown; i < rows.size(); ++i)
    samples += samplesOf(rows[i]);
  size_t hidden = rows.size() - shown;
  Table::Row row =
      sharedRow(ctx, samples, columns, labelColumn, {fmt::format("({} more)", hidden), ""});
  row.extra.add("rows", json::number(hidden));
  table.setOthers(std::move(row));
}

void setTotal(Table &table, const Context &ctx, size_t columns, size_t labelColumn) {
  Table::Row row;
  row.cells = totalCells(ctx);
  row.cells.resize(columns);
  row.cells[labelColumn] = {"total", ""};
  table.setTotal(std::move(row));
}

Table moduleTable(const Context &ctx) {
  std::vector<SpaceRow> rows = ctx.profile.byModule(ctx.capture, ctx.filter);
  std::vector<Table::Column> columns = shareColumns();
  columns.push_back({"module", "", Table::Align::Left});
  Table table(columns);
  for (size_t i = 0; i < ctx.shown(rows.size()); ++i) {
    Table::Row row = sharedRow(ctx, rows[i].samples, columns.size(), kShareColumns,
                               {shortName(rows[i].space), ""});
    row.extra.add("module", json::quote(rows[i].space));
    table.add(std::move(row));
  }
  setOthers(table, ctx, rows, columns.size(), kShareColumns,
            [](const SpaceRow &r) { return r.samples; });
  setTotal(table, ctx, columns.size(), kShareColumns);
  return table;
}

std::string callerText(uint64_t samples, uint64_t self, const std::string &what) {
  return fmt::format("  <- {:>6} {}", fmt::format("{:.1f}%", 100.0 * samples / self), what);
}

Table::Row callerRow(uint64_t samples, size_t columns) {
  Table::Row sub;
  sub.cells.resize(columns);
  sub.cells[0] = {fmt::format("{}", samples), json::number(samples)};
  return sub;
}

// Under a function, the call sites its self samples came from (frame 1), --top of them.
void addCallers(Table::Row &row, const Context &ctx, const FunctionRow &f, size_t columns,
                size_t moduleColumn, size_t functionColumn) {
  size_t shown = ctx.shown(f.callers.size());
  for (size_t c = 0; c < shown; ++c) {
    const CallerRow &caller = f.callers[c];
    std::string name = caller.function.empty() ? "[no caller]" : caller.function;
    std::string site =
        caller.file.empty() ? "" : fmt::format(" ({}:{})", shortName(caller.file), caller.line);
    Table::Row sub = callerRow(caller.samples, columns);
    sub.cells[moduleColumn] = {caller.function.empty() ? "" : shortName(caller.module), ""};
    sub.cells[functionColumn] = {callerText(caller.samples, f.self, name + site),
                                 json::quote(name)};
    sub.extra.add("module", json::quote(caller.module))
        .add("file", json::quote(caller.file))
        .add("line", json::number(uint64_t{caller.line}))
        .add("share", json::number(100.0 * caller.samples / f.self, 2));
    row.children.push_back(std::move(sub));
  }
  if (shown == f.callers.size())
    return;
  uint64_t samples = 0;
  for (size_t c = shown; c < f.callers.size(); ++c)
    samples += f.callers[c].samples;
  size_t hidden = f.callers.size() - shown;
  Table::Row sub = callerRow(samples, columns);
  sub.cells[functionColumn] = {callerText(samples, f.self, fmt::format("({} more)", hidden)), ""};
  sub.textOnly = true;
  row.children.push_back(std::move(sub));
  row.extra.add(
      "otherCallers",
      json::Object().add("rows", json::number(hidden)).add("samples", json::number(samples)).str());
}

Table functionTable(const Context &ctx) {
  std::vector<FunctionRow> rows = ctx.profile.byFunction(ctx.capture, ctx.filter);
  // With only the pc and frame 1, "inclusive" would miss every deeper frame; without it, callers
  // that never ran themselves have nothing to show.
  bool inclusive = ctx.capture.header.stackDepth > 2;
  if (!inclusive)
    std::erase_if(rows, [](const FunctionRow &r) { return r.self == 0; });
  std::vector<Table::Column> columns = shareColumns();
  if (inclusive)
    columns.push_back({"incl%", "inclusivePercent"});
  size_t moduleColumn = columns.size();
  columns.push_back({"module", "", Table::Align::Left});
  columns.push_back({"function", "function", Table::Align::Left});
  size_t functionColumn = moduleColumn + 1;
  Table table(columns, "callers");

  for (size_t i = 0; i < ctx.shown(rows.size()); ++i) {
    const FunctionRow &f = rows[i];
    Table::Row row = sharedRow(ctx, f.self, columns.size(), functionColumn,
                               {f.function, json::quote(f.function)});
    row.cells[moduleColumn] = {shortName(f.module), ""};
    row.extra.add("module", json::quote(f.module));
    if (inclusive) {
      double p = 100.0 * f.inclusive / ctx.total;
      row.cells[kShareColumns] = {fmt::format("{:.1f}%", p), json::number(p, 2)};
      row.extra.add("inclusive", json::number(f.inclusive));
    }
    if (ctx.options.callers)
      addCallers(row, ctx, f, columns.size(), moduleColumn, functionColumn);
    table.add(std::move(row));
  }
  setOthers(table, ctx, rows, columns.size(), functionColumn,
            [](const FunctionRow &r) { return r.self; });
  setTotal(table, ctx, columns.size(), functionColumn);
  return table;
}

Table lineTable(const Context &ctx) {
  std::vector<LineRow> rows = ctx.profile.byLine(ctx.capture, ctx.filter);
  std::vector<Table::Column> columns = shareColumns();
  columns.push_back({"line", "", Table::Align::Left});
  columns.push_back({"function", "function", Table::Align::Left});
  Table table(columns);
  for (size_t i = 0; i < ctx.shown(rows.size()); ++i) {
    const LineRow &l = rows[i];
    std::string where =
        l.file.empty() ? "[no line info]" : fmt::format("{}:{}", shortName(l.file), l.line);
    Table::Row row = sharedRow(ctx, l.samples, columns.size(), kShareColumns, {where, ""});
    const std::string &top = l.functions.front();
    std::string function =
        l.functions.size() == 1 ? top : fmt::format("{} and {} more", top, l.functions.size() - 1);
    std::vector<std::string> all;
    for (const std::string &name : l.functions)
      all.push_back(json::quote(name));
    row.cells[kShareColumns + 1] = {function, json::quote(top)};
    row.extra.add("file", json::quote(l.file))
        .add("line", json::number(uint64_t{l.line}))
        .add("functions", json::array(all));
    table.add(std::move(row));
  }
  setOthers(table, ctx, rows, columns.size(), kShareColumns,
            [](const LineRow &r) { return r.samples; });
  setTotal(table, ctx, columns.size(), kShareColumns);
  return table;
}

Table instructionTable(const Context &ctx) {
  std::vector<InstructionRow> rows = ctx.profile.byInstruction(ctx.capture, ctx.filter);
  std::vector<Table::Column> columns = shareColumns();
  columns.push_back({"address", "", Table::Align::Left});
  columns.push_back({"module+offset", "", Table::Align::Left});
  columns.push_back({"function+offset", "", Table::Align::Left});
  Table table(columns);
  for (size_t i = 0; i < ctx.shown(rows.size()); ++i) {
    const InstructionRow &r = rows[i];
    Table::Row row = sharedRow(ctx, r.samples, columns.size(), kShareColumns, {hex(r.pc), ""});
    row.cells[kShareColumns + 1] = {fmt::format("{}+{:#x}", shortName(r.module), r.moduleOffset),
                                    ""};
    std::string function = r.function.empty()
                               ? std::string(kUnknown)
                               : fmt::format("{}+{:#x}", r.function, r.functionOffset);
    if (!r.inlined.empty())
      function += fmt::format(" [inlined: {}]", fmt::join(r.inlined, " < "));
    row.cells[kShareColumns + 2] = {function, ""};
    std::vector<std::string> inlined;
    for (const std::string &name : r.inlined)
      inlined.push_back(json::quote(name));
    row.extra.add("pc", json::number(r.pc))
        .add("module", json::quote(r.module))
        .add("moduleOffset", json::number(r.moduleOffset))
        .add("function", json::quote(r.function))
        .add("functionOffset", json::number(r.functionOffset))
        .add("inlined", json::array(inlined));
    table.add(std::move(row));
  }
  setOthers(table, ctx, rows, columns.size(), kShareColumns,
            [](const InstructionRow &r) { return r.samples; });
  setTotal(table, ctx, columns.size(), kShareColumns);
  return table;
}

// Space columns: the executable, then libraries, then named pseudo-mappings ([vdso]), then the
// syscall and unknown spaces; by samples within each group.
std::vector<std::string> spaceOrder(const Capture &capture, const std::vector<MatrixRow> &rows) {
  std::map<std::string, uint64_t> totals;
  for (const MatrixRow &row : rows)
    for (const auto &[space, n] : row.spaces)
      totals[space] += n;
  auto group = [&](const std::string &space) {
    if (space == capture.header.program)
      return 0;
    if (space == kSyscallSpace)
      return 3;
    if (space == kUnknown)
      return 4;
    return space.starts_with('[') ? 2 : 1;
  };
  std::vector<std::string> spaces;
  for (const auto &[space, n] : totals)
    spaces.push_back(space);
  std::stable_sort(spaces.begin(), spaces.end(), [&](const std::string &a, const std::string &b) {
    int ga = group(a), gb = group(b);
    return ga != gb ? ga < gb : totals[a] > totals[b];
  });
  return spaces;
}

Table matrixTable(const Context &ctx, bool perThread) {
  std::vector<MatrixRow> rows = perThread ? ctx.profile.byThread(ctx.capture, ctx.filter)
                                          : ctx.profile.byProcess(ctx.capture, ctx.filter);
  std::vector<std::string> spaces = spaceOrder(ctx.capture, rows);
  std::map<uint64_t, std::string> names;
  if (perThread) {
    for (const ThreadInfo &t : ctx.capture.threads)
      names[t.tid] = t.name;
  } else {
    names[ctx.capture.header.pid] = shortName(ctx.capture.header.program);
  }

  std::vector<Table::Column> columns = {
      {perThread ? "tid" : "pid", perThread ? "tid" : "pid"},
      {perThread ? "thread" : "process", "name", Table::Align::Left}};
  for (const std::string &space : spaces)
    columns.push_back({shortName(space), ""});
  for (Table::Column &column : shareColumns())
    columns.push_back(std::move(column));
  size_t shareColumn = 2 + spaces.size();

  auto spaceCells = [&](Table::Row &row, const std::map<std::string, uint64_t> &counts) {
    json::Object object;
    for (size_t s = 0; s < spaces.size(); ++s) {
      auto it = counts.find(spaces[s]);
      uint64_t n = it == counts.end() ? 0 : it->second;
      row.cells[2 + s] = {n ? fmt::format("{}", n) : "-", ""};
      if (n)
        object.add(spaces[s], json::number(n));
    }
    row.extra.add("spaces", object.str());
  };
  auto matrixRow = [&](std::vector<Cell> labels, const std::map<std::string, uint64_t> &counts,
                       std::vector<Cell> share) {
    Table::Row row;
    row.cells = std::move(labels);
    row.cells.resize(shareColumn);
    spaceCells(row, counts);
    append(row.cells, std::move(share));
    return row;
  };

  Table table(columns);
  std::map<std::string, uint64_t> totals, others;
  for (size_t i = 0; i < rows.size(); ++i) {
    const MatrixRow &r = rows[i];
    for (const auto &[space, n] : r.spaces) {
      totals[space] += n;
      if (i >= ctx.shown(rows.size()))
        others[space] += n;
    }
    if (i < ctx.shown(rows.size()))
      table.add(matrixRow(
          {{fmt::format("{}", r.id), json::number(r.id)}, {names[r.id], json::quote(names[r.id])}},
          r.spaces, shareCells(ctx, r.samples)));
  }
  if (size_t hidden = rows.size() - ctx.shown(rows.size())) {
    uint64_t samples = 0;
    for (const auto &[space, n] : others)
      samples += n;
    Table::Row row =
        matrixRow({{}, {fmt::format("({} more)", hidden), ""}}, others, shareCells(ctx, samples));
    row.extra.add("rows", json::number(hidden));
    table.setOthers(std::move(row));
  }
  table.setTotal(matrixRow({{}, {"total", ""}}, totals, totalCells(ctx)));
  return table;
}

std::string threadLabel(const Capture &capture, uint64_t tid) {
  for (const ThreadInfo &t : capture.threads)
    if (t.tid == tid && !t.name.empty())
      return fmt::format("thread {} ({})", tid, t.name);
  return fmt::format("thread {}", tid);
}

// Why there is nothing to show, or empty when there is something.
std::string emptyReason(const Context &ctx) {
  if (ctx.profile.samples() == 0)
    return "no samples in this capture";
  const ProfileOptions &o = ctx.options;
  if (o.tid && ctx.profile.count({false, o.tid}) == 0) {
    std::set<uint64_t> tids = ctx.profile.threads({});
    return fmt::format("no samples of thread {} (sampled threads: {})", *o.tid,
                       fmt::join(tids, ", "));
  }
  if (ctx.total == 0)
    return fmt::format("no on-CPU samples{} among {}; --wall counts them all",
                       o.tid ? " of " + threadLabel(ctx.capture, *o.tid) : "",
                       ctx.profile.count({false, o.tid}));
  return {};
}

std::string headerLine(const Context &ctx) {
  const ProfileOptions &o = ctx.options;
  std::string mode =
      o.onCpuOnly ? fmt::format("on-CPU, of {}", ctx.profile.count({false, o.tid})) : "wall-clock";
  size_t threads = ctx.profile.threads(ctx.filter).size();
  std::string who = o.tid ? threadLabel(ctx.capture, *o.tid)
                          : fmt::format("{} thread{}", threads, threads == 1 ? "" : "s");
  uint64_t period = ctx.capture.header.periodNs;
  std::string timing = period ? fmt::format("period {}, {} sampled", formatDuration(period),
                                            formatDuration(ctx.total * period))
                              : "period unknown";
  return fmt::format("strobe profile: {} samples ({}), {}, {}\n", ctx.total, mode, who, timing);
}

const char *viewName(ProfileOptions::By by) {
  switch (by) {
  case ProfileOptions::By::Process:
    return "process";
  case ProfileOptions::By::Thread:
    return "thread";
  case ProfileOptions::By::Module:
    return "module";
  case ProfileOptions::By::Function:
    return "function";
  case ProfileOptions::By::Line:
    return "line";
  case ProfileOptions::By::Instruction:
    return "instruction";
  }
  return "";
}

Table buildTable(const Context &ctx) {
  switch (ctx.options.by) {
  case ProfileOptions::By::Process:
    return matrixTable(ctx, false);
  case ProfileOptions::By::Thread:
    return matrixTable(ctx, true);
  case ProfileOptions::By::Module:
    return moduleTable(ctx);
  case ProfileOptions::By::Function:
    return functionTable(ctx);
  case ProfileOptions::By::Line:
    return lineTable(ctx);
  case ProfileOptions::By::Instruction:
    return instructionTable(ctx);
  }
  return Table({});
}

// A frame as flame graphs show it: the function, else its module in brackets (as perf does),
// else kUnknown.
std::string foldedFrame(const FrameSymbols &frame) {
  if (frame.symbol && !frame.symbol->function.empty())
    return frame.symbol->function;
  return frame.module ? "[" + shortName(frame.module->path) + "]" : std::string(kUnknown);
}

// Brendan Gregg's collapsed-stack format, which flamegraph.pl, inferno and speedscope read:
// "outermost;...;sampled count", the hottest stack first. Stacks that print alike (other
// threads, other call sites of the same functions) share a line.
std::string foldedStacks(const Context &ctx) {
  std::map<std::string, uint64_t> stacks;
  for (const auto &[key, n] : ctx.profile.stacks(ctx.filter)) {
    std::vector<std::string> frames;
    for (size_t i = key.stack.size(); i-- > 0;)
      frames.push_back(foldedFrame(frameAt(ctx.capture, key.stack, i)));
    stacks[fmt::format("{}", fmt::join(frames, ";"))] += n;
  }
  std::vector<std::pair<std::string, uint64_t>> lines(stacks.begin(), stacks.end());
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  std::string out;
  for (const auto &[stack, n] : lines)
    out += fmt::format("{} {}\n", stack, n);
  return out;
}

json::Object jsonHeader(const Context &ctx) {
  const ProfileOptions &o = ctx.options;
  json::Object doc;
  doc.add("report", json::quote("profile"))
      .add("by", json::quote(viewName(o.by)))
      .add("mode", json::quote(o.onCpuOnly ? "cpu" : "wall"))
      .add("tid", o.tid ? json::number(*o.tid) : "null")
      .add("samples", json::number(ctx.total))
      .add("allSamples", json::number(ctx.profile.samples()))
      .add("threads", json::number(uint64_t{ctx.profile.threads(ctx.filter).size()}))
      .add("periodNs", json::number(ctx.capture.header.periodNs));
  return doc;
}

} // namespace

std::string renderProfile(const Capture &capture, const ProfileOptions &options) {
  Profile profile;
  for (const Sample &sample : capture.samples)
    profile.add(sample);
  return renderProfile(capture, profile, options);
}

std::string renderProfile(const Capture &capture, const Profile &profile,
                          const ProfileOptions &options) {
  SampleFilter filter{options.onCpuOnly, options.tid};
  Context ctx{capture, profile, options, filter, profile.count(filter)};
  std::string reason = emptyReason(ctx);
  if (options.format == ProfileOptions::Format::Json) {
    json::Object doc = jsonHeader(ctx);
    if (!reason.empty())
      doc.add("message", json::quote(reason)).add("rows", "[]");
    else
      buildTable(ctx).addJson(doc);
    return doc.str() + '\n';
  }
  if (options.wholeStacks()) {
    if (!reason.empty()) // no header line to say it in: the output is only stacks
      throw ReportError(reason);
    return options.format == ProfileOptions::Format::Folded
               ? foldedStacks(ctx)
               : pprofProfile(capture, profile, filter);
  }
  if (!reason.empty())
    return fmt::format("strobe profile: {}\n", reason);
  return headerLine(ctx) + buildTable(ctx).text();
}

} // namespace strobe
