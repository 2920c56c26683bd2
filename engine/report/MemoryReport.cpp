#include "report/MemoryReport.h"

#include "analysis/Profile.h"
#include "report/ProfileReport.h"
#include "report/Table.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <iterator>

namespace strobe {

namespace {

struct ColumnName {
  MemoryColumn column;
  std::string_view name;
};

constexpr std::array<ColumnName, 14> kColumnNames = {{
    {MemoryColumn::Key, "key"},
    {MemoryColumn::Size, "size"},
    {MemoryColumn::Minimum, "min"},
    {MemoryColumn::Maximum, "max"},
    {MemoryColumn::Malloc, "malloc"},
    {MemoryColumn::Realloc, "realloc"},
    {MemoryColumn::Free, "free"},
    {MemoryColumn::Memalign, "memalign"},
    {MemoryColumn::Allocated, "allocated"},
    {MemoryColumn::Freed, "freed"},
    {MemoryColumn::Blocks, "blocks"},
    {MemoryColumn::Live, "live"},
    {MemoryColumn::Peak, "peak"},
    {MemoryColumn::Untracked, "untracked"},
}};

std::string_view keyHeader(KeyBy by) {
  switch (by) {
  case KeyBy::Library:
    return "library";
  case KeyBy::Function:
    return "function";
  case KeyBy::Thread:
    return "thread";
  }
  return "key";
}

std::string_view attributionName(AttributionMode mode) {
  switch (mode) {
  case AttributionMode::First:
    return "first";
  case AttributionMode::Last:
    return "last";
  case AttributionMode::All:
    return "all";
  }
  return "";
}

// How the reports name a unit; MODULE!FUNCTION uses the module's file name.
class KeyNames {
public:
  KeyNames(const Capture &capture, const std::vector<MemoryKey> &keys)
      : capture_(capture), keys_(keys) {}

  std::string label(KeyId id) const {
    const MemoryKey &key = keys_[id];
    if (key.module.empty()) {
      std::string name = threadName(key.tid);
      return name.empty() ? fmt::format("{}", key.tid) : fmt::format("{} {}", key.tid, name);
    }
    std::string module = shortName(key.module);
    return key.function.empty() ? module : module + "!" + key.function;
  }

  std::string label(const std::vector<KeyId> &ids) const {
    std::vector<std::string> labels;
    for (KeyId id : ids)
      labels.push_back(label(id));
    return fmt::format("{}", fmt::join(labels, ", "));
  }

  json::Object json(KeyId id) const {
    const MemoryKey &key = keys_[id];
    json::Object object;
    if (key.module.empty())
      return object.add("tid", json::number(key.tid)).add("name", json::quote(threadName(key.tid)));
    object.add("module", json::quote(key.module));
    if (!key.function.empty())
      object.add("function", json::quote(key.function));
    return object;
  }

  std::string json(const std::vector<KeyId> &ids) const {
    std::vector<std::string> objects;
    for (KeyId id : ids)
      objects.push_back(json(id).add("key", json::quote(label(id))).str());
    return json::array(objects);
  }

private:
  std::string threadName(uint64_t tid) const {
    for (const ThreadInfo &t : capture_.threads)
      if (t.tid == tid)
        return t.name;
    return {};
  }

  const Capture &capture_;
  const std::vector<MemoryKey> &keys_;
};

// operator new / new[] / delete / delete[], every variant (Itanium C++ ABI linkage names).
bool isCxxOperator(const std::string &symbol) {
  return symbol.starts_with("_Znw") || symbol.starts_with("_Zna") || symbol.starts_with("_Zdl") ||
         symbol.starts_with("_Zda");
}

Cell bytesCell(int64_t bytes) { return {formatBytes(bytes), fmt::format("{}", bytes)}; }
Cell countCell(uint64_t n) { return {fmt::format("{}", n), json::number(n)}; }

// The columns every usage row shares, in kUsageColumns order.
struct UsageColumn {
  MemoryColumn column;
  const char *header;
  const char *key;
};

constexpr std::array<UsageColumn, 13> kUsageColumns = {{
    {MemoryColumn::Size, "size", "size"},
    {MemoryColumn::Minimum, "min", "min"},
    {MemoryColumn::Maximum, "max", "max"},
    {MemoryColumn::Malloc, "malloc", "malloc"},
    {MemoryColumn::Realloc, "realloc", "realloc"},
    {MemoryColumn::Free, "free", "free"},
    {MemoryColumn::Memalign, "memalign", "memalign"},
    {MemoryColumn::Allocated, "allocated", "allocated"},
    {MemoryColumn::Freed, "freed", "freed"},
    {MemoryColumn::Blocks, "blocks", "liveBlocks"},
    {MemoryColumn::Live, "live", "liveBytes"},
    {MemoryColumn::Peak, "peak", "peakLiveBytes"},
    {MemoryColumn::Untracked, "untracked", "untrackedFrees"},
}};

int64_t valueOf(const HeapUsage &u, MemoryColumn column) {
  switch (column) {
  case MemoryColumn::Key:
    return 0;
  case MemoryColumn::Size:
    return u.size;
  case MemoryColumn::Minimum:
    return u.minimum;
  case MemoryColumn::Maximum:
    return u.maximum;
  case MemoryColumn::Malloc:
    return static_cast<int64_t>(u.mallocCalls);
  case MemoryColumn::Realloc:
    return static_cast<int64_t>(u.reallocCalls);
  case MemoryColumn::Free:
    return static_cast<int64_t>(u.freeCalls);
  case MemoryColumn::Memalign:
    return static_cast<int64_t>(u.memalignCalls);
  case MemoryColumn::Allocated:
    return static_cast<int64_t>(u.allocatedBytes);
  case MemoryColumn::Freed:
    return static_cast<int64_t>(u.freedBytes);
  case MemoryColumn::Blocks:
    return u.liveBlocks;
  case MemoryColumn::Live:
    return u.liveBytes;
  case MemoryColumn::Peak:
    return u.peakLiveBytes;
  case MemoryColumn::Untracked:
    return static_cast<int64_t>(u.untrackedFrees);
  }
  return 0;
}

bool isByteColumn(MemoryColumn column) {
  switch (column) {
  case MemoryColumn::Size:
  case MemoryColumn::Minimum:
  case MemoryColumn::Maximum:
  case MemoryColumn::Allocated:
  case MemoryColumn::Freed:
  case MemoryColumn::Live:
  case MemoryColumn::Peak:
    return true;
  default:
    return false;
  }
}

// Sums of rows (the ones past --top) have no meaningful extremes or peak.
bool isAdditive(MemoryColumn column) {
  return column != MemoryColumn::Minimum && column != MemoryColumn::Maximum &&
         column != MemoryColumn::Peak;
}

// A layout of usage columns: which of kUsageColumns a table shows.
using Layout = std::vector<UsageColumn>;

Layout fullLayout() { return {kUsageColumns.begin(), kUsageColumns.end()}; }

// Per invocation and per interval the live figures belong to the whole run, not to a row.
Layout spanLayout() {
  Layout layout;
  for (const UsageColumn &c : kUsageColumns)
    if (c.column != MemoryColumn::Blocks && c.column != MemoryColumn::Live &&
        c.column != MemoryColumn::Peak)
      layout.push_back(c);
  return layout;
}

std::vector<Table::Column> usageColumns(const Layout &layout) {
  std::vector<Table::Column> columns;
  for (const UsageColumn &c : layout)
    columns.push_back({c.header, c.key});
  return columns;
}

std::vector<Cell> usageCells(const Layout &layout, const HeapUsage &u, bool sumsOnly = false) {
  std::vector<Cell> cells;
  for (const UsageColumn &c : layout) {
    if (sumsOnly && !isAdditive(c.column)) {
      cells.push_back({});
      continue;
    }
    int64_t value = valueOf(u, c.column);
    cells.push_back(isByteColumn(c.column) ? bytesCell(value)
                                           : countCell(static_cast<uint64_t>(value)));
  }
  return cells;
}

void addSums(HeapUsage &sum, const HeapUsage &u) {
  sum.size += u.size;
  sum.mallocCalls += u.mallocCalls;
  sum.reallocCalls += u.reallocCalls;
  sum.freeCalls += u.freeCalls;
  sum.memalignCalls += u.memalignCalls;
  sum.allocatedBytes += u.allocatedBytes;
  sum.freedBytes += u.freedBytes;
  sum.untrackedFrees += u.untrackedFrees;
  sum.liveBlocks += u.liveBlocks;
  sum.liveBytes += u.liveBytes;
}

void sortRows(std::vector<KeyUsage> &rows, MemoryColumn column, const KeyNames &names) {
  std::stable_sort(rows.begin(), rows.end(), [&](const KeyUsage &a, const KeyUsage &b) {
    if (column != MemoryColumn::Key) {
      int64_t va = valueOf(a.usage, column), vb = valueOf(b.usage, column);
      if (va != vb)
        return va > vb;
    }
    return names.label(a.key) < names.label(b.key);
  });
}

size_t shown(size_t top, size_t rows) { return top == 0 ? rows : std::min(top, rows); }

json::Object header(const Capture &capture, const MemoryAnalysisOptions &options) {
  json::Object doc;
  doc.add("by", json::quote(keyHeader(options.attribution.by)))
      .add("attribution", json::quote(attributionName(options.attribution.mode)))
      .add("frees", json::quote(options.frees == FreesMode::Owner ? "owner" : "callsite"))
      .add("events", json::number(uint64_t{capture.allocEvents.size()}));
  return doc;
}

std::string finish(const Table &table, json::Object doc, bool asJson) {
  if (!asJson)
    return table.text();
  table.addJson(doc);
  return doc.str() + "\n";
}

// Rows past --top, summed, so that the table still adds up.
Table::Row othersRow(const Layout &layout, const std::vector<KeyUsage> &rows, size_t from,
                     size_t leading) {
  HeapUsage sum;
  for (size_t i = from; i < rows.size(); ++i)
    addSums(sum, rows[i].usage);
  Table::Row row;
  row.cells.resize(leading);
  for (Cell &cell : usageCells(layout, sum, true))
    row.cells.push_back(std::move(cell));
  row.cells.push_back({fmt::format("({} more)", rows.size() - from), ""});
  row.extra.add("rows", json::number(uint64_t{rows.size() - from}));
  return row;
}

Table::Row totalRow(const Layout &layout, const HeapUsage &total, size_t leading) {
  Table::Row row;
  row.cells.resize(leading);
  for (Cell &cell : usageCells(layout, total))
    row.cells.push_back(std::move(cell));
  row.cells.push_back({"total", ""});
  return row;
}

std::string keyTable(const Capture &capture, const MemoryTableOptions &options) {
  UsageTable result = usageByKey(capture, options.analysis);
  KeyNames names(capture, result.keys);
  sortRows(result.rows, options.sort, names);
  Layout layout = fullLayout();
  std::vector<Table::Column> columns = usageColumns(layout);
  columns.push_back(
      {std::string(keyHeader(options.analysis.attribution.by)), "key", Table::Align::Left});
  Table table(columns);
  size_t count = shown(options.top, result.rows.size());
  for (size_t i = 0; i < count; ++i) {
    Table::Row row;
    row.cells = usageCells(layout, result.rows[i].usage);
    row.cells.push_back(
        {names.label(result.rows[i].key), json::quote(names.label(result.rows[i].key))});
    row.extra = names.json(result.rows[i].key);
    table.add(std::move(row));
  }
  if (count < result.rows.size())
    table.setOthers(othersRow(layout, result.rows, count, 0));
  table.setTotal(totalRow(layout, result.total, 0));
  return finish(table, header(capture, options.analysis), options.json);
}

std::string invocationTable(const Capture &capture, const MemoryTableOptions &options) {
  InvocationTable result = usageByInvocation(capture, options.analysis);
  KeyNames names(capture, result.keys);
  Layout layout = spanLayout();
  std::vector<Table::Column> columns = {{"#", "row"}, {"start", "startNs"}};
  for (Table::Column &c : usageColumns(layout))
    columns.push_back(std::move(c));
  columns.push_back(
      {std::string(keyHeader(options.analysis.attribution.by)), "key", Table::Align::Left});
  Table table(columns);
  size_t count = shown(options.top, result.rows.size());
  for (size_t i = 0; i < count; ++i) {
    const InvocationRow &r = result.rows[i];
    Table::Row row;
    row.cells = {countCell(i), {formatDuration(r.startNs), json::number(r.startNs)}};
    for (Cell &cell : usageCells(layout, r.usage))
      row.cells.push_back(std::move(cell));
    row.cells.push_back({names.label(r.keys), json::quote(names.label(r.keys))});
    row.extra.add("endNs", json::number(r.endNs))
        .add("events", json::number(uint64_t{r.events}))
        .add("keys", names.json(r.keys));
    table.add(std::move(row));
  }
  if (count < result.rows.size()) {
    std::vector<KeyUsage> rest;
    for (size_t i = count; i < result.rows.size(); ++i)
      rest.push_back({0, result.rows[i].usage});
    table.setOthers(othersRow(layout, rest, 0, 2));
  }
  table.setTotal(totalRow(layout, result.total, 2));
  json::Object doc = header(capture, options.analysis);
  doc.add("per", json::quote("invocation"));
  return finish(table, std::move(doc), options.json);
}

std::string intervalTable(const Capture &capture, const MemoryTableOptions &options) {
  IntervalTable result = usageByInterval(capture, options.analysis, *options.intervalNs);
  KeyNames names(capture, result.keys);
  Layout layout = spanLayout();
  std::vector<Table::Column> columns = {{"interval", "", Table::Align::Left}};
  for (Table::Column &c : usageColumns(layout))
    columns.push_back(std::move(c));
  columns.push_back({"cumulative", "cumulative"});
  columns.push_back(
      {std::string(keyHeader(options.analysis.attribution.by)), "key", Table::Align::Left});
  Table table(columns);
  std::vector<std::string> blocks;
  for (IntervalBlock &block : result.blocks) {
    sortRows(block.rows, options.sort, names);
    std::string label = fmt::format("{} .. {}", formatDuration(block.startNs),
                                    formatDuration(block.startNs + result.widthNs));
    auto cumulativeOf = [&](KeyId key) {
      for (const auto &[id, bytes] : block.cumulative)
        if (id == key)
          return bytes;
      return int64_t{0};
    };
    size_t count = shown(options.top, block.rows.size());
    for (size_t i = 0; i < count; ++i) {
      const KeyUsage &r = block.rows[i];
      Table::Row row;
      row.cells = {{i == 0 ? label : "", ""}};
      for (Cell &cell : usageCells(layout, r.usage))
        row.cells.push_back(std::move(cell));
      row.cells.push_back(bytesCell(cumulativeOf(r.key)));
      row.cells.push_back({names.label(r.key), json::quote(names.label(r.key))});
      row.extra.add("startNs", json::number(block.startNs)).merge(names.json(r.key));
      table.add(std::move(row));
    }
    // Units idle in this window still hold what they held: the text lists them once.
    std::vector<std::string> idle;
    for (const auto &[id, bytes] : block.cumulative) {
      bool active = std::any_of(block.rows.begin(), block.rows.begin() + count,
                                [id = id](const KeyUsage &r) { return r.key == id; });
      if (!active && bytes != 0)
        idle.push_back(fmt::format("{} {}", names.label(id), formatBytes(bytes)));
    }
    if (!idle.empty()) {
      Table::Row row;
      row.cells.resize(columns.size());
      row.cells.back() = {fmt::format("(others at the end: {})", fmt::join(idle, ", ")), ""};
      row.textOnly = true;
      table.add(std::move(row));
    }
    std::vector<std::string> cumulative;
    for (const auto &[id, bytes] : block.cumulative)
      cumulative.push_back(names.json(id)
                               .add("key", json::quote(names.label(id)))
                               .add("bytes", fmt::format("{}", bytes))
                               .str());
    blocks.push_back(json::Object()
                         .add("startNs", json::number(block.startNs))
                         .add("cumulative", json::array(cumulative))
                         .str());
  }
  Table::Row total = totalRow(layout, result.total, 1);
  total.cells.insert(total.cells.end() - 1, Cell{}); // no cumulative for the whole run
  table.setTotal(std::move(total));
  json::Object doc = header(capture, options.analysis);
  doc.add("intervalNs", json::number(result.widthNs)).add("intervals", json::array(blocks));
  return finish(table, std::move(doc), options.json);
}

// One line per frame of an allocation stack, innermost caller first.
std::vector<Table::Row> stackRows(const Capture &capture, const std::vector<uint64_t> &stack,
                                  size_t columns) {
  std::vector<Table::Row> rows;
  for (size_t i = 1; i < stack.size(); ++i) {
    const ModuleInfo *module = capture.moduleFor(stack[i] - 1);
    const SymbolInfo *symbol = capture.callerSymbol(stack[i]);
    std::string function =
        symbol && !symbol->function.empty() ? symbol->function : fmt::format("{:#x}", stack[i]);
    std::string where = module ? shortName(module->path) + "!" + function : function;
    if (symbol && !symbol->file.empty())
      where += fmt::format(" ({}:{})", shortName(symbol->file), symbol->line);
    Table::Row row;
    row.cells.resize(columns);
    row.cells.back() = {fmt::format("  #{} {}", i, where), ""};
    row.extra.add("pc", json::quote(fmt::format("{:#x}", stack[i])))
        .add("module", json::quote(module ? module->path : std::string(kUnknown)))
        .add("function", json::quote(symbol ? symbol->function : ""))
        .add("file", json::quote(symbol ? symbol->file : ""))
        .add("line", json::number(uint64_t{symbol ? symbol->line : 0}));
    rows.push_back(std::move(row));
  }
  return rows;
}

} // namespace

std::optional<MemoryColumn> memoryColumnFromName(std::string_view name) {
  for (const ColumnName &c : kColumnNames)
    if (c.name == name)
      return c.column;
  return std::nullopt;
}

std::string formatBytes(int64_t bytes) {
  static constexpr const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const char *sign = bytes < 0 ? "-" : "";
  uint64_t magnitude = bytes < 0 ? 0 - static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes);
  if (magnitude < 1024)
    return fmt::format("{}{} B", sign, magnitude);
  double value = static_cast<double>(magnitude) / 1024;
  size_t u = 0;
  while (value >= 1024 && u + 1 < std::size(units)) {
    value /= 1024;
    ++u;
  }
  int decimals = value >= 99.95 ? 0 : value >= 9.995 ? 1 : 2;
  return fmt::format("{}{:.{}f} {}", sign, value, decimals, units[u]);
}

std::string renderMemoryTable(const Capture &capture, const MemoryTableOptions &options) {
  if (options.perInvocation)
    return invocationTable(capture, options);
  if (options.intervalNs)
    return intervalTable(capture, options);
  return keyTable(capture, options);
}

std::string renderLeaks(const Capture &capture, const LeakOptions &options) {
  LeakTable result = liveBlocksByStack(capture, options.analysis);
  KeyNames names(capture, result.keys);
  std::vector<Table::Column> columns = {
      {"live", "liveBytes"},
      {"blocks", "liveBlocks"},
      {"allocator", "allocator", Table::Align::Left},
      {std::string(keyHeader(options.analysis.attribution.by)) + " / stack", "key",
       Table::Align::Left}};
  Table table(columns, "stack");
  size_t count = shown(options.top, result.groups.size());
  for (size_t i = 0; i < count; ++i) {
    const LeakGroup &g = result.groups[i];
    Table::Row row;
    row.cells = {
        bytesCell(static_cast<int64_t>(g.bytes)),
        countCell(g.blocks),
        {std::string(allocFunctionName(g.function)), json::quote(allocFunctionName(g.function))},
        {names.label(g.keys), json::quote(names.label(g.keys))}};
    row.extra.add("keys", names.json(g.keys));
    row.children = stackRows(capture, g.stack, columns.size());
    table.add(std::move(row));
  }
  if (count < result.groups.size()) {
    uint64_t bytes = 0, blocks = 0;
    for (size_t i = count; i < result.groups.size(); ++i) {
      bytes += result.groups[i].bytes;
      blocks += result.groups[i].blocks;
    }
    Table::Row row;
    row.cells = {bytesCell(static_cast<int64_t>(bytes)),
                 countCell(blocks),
                 {},
                 {fmt::format("({} more)", result.groups.size() - count), ""}};
    row.extra.add("stacks", json::number(uint64_t{result.groups.size() - count}));
    table.setOthers(std::move(row));
  }
  table.setTotal(
      {{bytesCell(static_cast<int64_t>(result.bytes)), countCell(result.blocks), {}, {"total", ""}},
       {},
       {},
       false});
  return finish(table, header(capture, options.analysis), options.json);
}

std::string renderMemoryStatus(const AllocTracker &tracker) {
  const AllocTrackerStats &s = tracker.stats();
  const HeapLedger &ledger = tracker.ledger();
  std::string out = fmt::format("heap tracking: {}\n", tracker.active() ? "active" : "stopped");
  out += fmt::format("hooks: {} function{} ({} entry and {} exit breakpoints", s.hooked.size(),
                     s.hooked.size() == 1 ? "" : "s", s.entryBreakpoints, s.exitBreakpoints);
  if (tracker.options().mmap)
    out += "; anonymous mappings too";
  if (s.failedBreakpoints)
    out += fmt::format("; {} refused by the debugger", s.failedBreakpoints);
  out += ")\n";
  if (s.replanted)
    out += fmt::format("planted again: {} breakpoint{} a debugger command had deleted\n",
                       s.replanted, s.replanted == 1 ? "" : "s");
  if (!s.unknown.empty())
    out += fmt::format("not allocation functions strobe hooks: {}\n", fmt::join(s.unknown, ", "));
  // A process without a C++ runtime has none of the twenty operator new / delete symbols: one
  // line says so instead of listing them.
  std::vector<std::string> notFound;
  std::copy_if(s.notFound.begin(), s.notFound.end(), std::back_inserter(notFound),
               [](const std::string &name) { return !isCxxOperator(name); });
  bool noCxxRuntime = notFound.size() < s.notFound.size() &&
                      std::none_of(s.hooked.begin(), s.hooked.end(), isCxxOperator);
  if (!noCxxRuntime)
    notFound = s.notFound;
  if (!notFound.empty())
    out += fmt::format("not found: {}\n", fmt::join(notFound, ", "));
  if (noCxxRuntime)
    out += "operator new / delete: not in this process (no C++ runtime is loaded)\n";
  if (!s.unscannable.empty())
    out += fmt::format("not hooked (where they return is unknown): {}\n",
                       fmt::join(s.unscannable, ", "));
  out += fmt::format("events: {}; traps: {}; nested calls: {}; failed allocations: {}\n", s.events,
                     s.traps, s.nestedCalls, s.failedCalls);
  if (s.abandonedCalls || s.splitCalls || s.unreadable || tracker.pendingCalls())
    out +=
        fmt::format("calls pending: {}; abandoned: {}; split reallocs: {}; unreadable hits: {}\n",
                    tracker.pendingCalls(), s.abandonedCalls, s.splitCalls, s.unreadable);
  out += fmt::format("live: {} in {} {} (peak {}); untracked frees: {}\n",
                     formatBytes(static_cast<int64_t>(ledger.liveBytes())), ledger.liveBlocks(),
                     ledger.liveBlocks() == 1 ? "block" : "blocks",
                     formatBytes(static_cast<int64_t>(ledger.peakLiveBytes())),
                     ledger.untrackedReleases());
  return out;
}

} // namespace strobe
