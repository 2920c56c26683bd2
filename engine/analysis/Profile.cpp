#include "analysis/Profile.h"

#include <algorithm>
#include <tuple>

namespace strobe {

size_t ProfileKeyHash::operator()(const ProfileKey &key) const {
  // Multiply-xorshift mixing: return addresses share high bits, so plain xor would collide.
  uint64_t h = key.tid * 0x9E3779B97F4A7C15ull + (key.onCpu ? 1 : 0) + (key.inSyscall ? 2 : 0);
  for (uint64_t word : key.stack) {
    h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return static_cast<size_t>(h);
}

// The module of ret - 1: a call can be the last instruction of a mapping.
FrameSymbols frameAt(const Capture &capture, const std::vector<uint64_t> &stack, size_t i) {
  uint64_t addr = stack[i];
  if (i == 0)
    return {capture.symbolFor(addr), capture.moduleFor(addr)};
  return {capture.callerSymbol(addr), capture.moduleFor(addr - 1)};
}

bool SampleFilter::accepts(const ProfileKey &key) const {
  return (!onCpuOnly || key.onCpu) && (!tid || *tid == key.tid);
}

void Profile::add(const Sample &sample) {
  scratch_.tid = sample.tid;
  scratch_.onCpu = sample.onCpu;
  scratch_.inSyscall = sample.inSyscall;
  scratch_.stack.assign(sample.stack.begin(), sample.stack.end());
  // A sample whose pc could not be read still took time; pc 0 lies in no module and no function.
  if (scratch_.stack.empty())
    scratch_.stack.push_back(0);
  ++samples_;
  if (auto it = counts_.find(scratch_); it != counts_.end())
    ++it->second;
  else
    counts_.emplace(scratch_, 1);
}

uint64_t Profile::count(const SampleFilter &filter) const {
  uint64_t total = 0;
  for (const auto &[key, n] : counts_)
    if (filter.accepts(key))
      total += n;
  return total;
}

std::set<uint64_t> Profile::threads(const SampleFilter &filter) const {
  std::set<uint64_t> tids;
  for (const auto &[key, n] : counts_)
    if (filter.accepts(key))
      tids.insert(key.tid);
  return tids;
}

std::map<uint64_t, uint64_t> Profile::byPc(const SampleFilter &filter) const {
  std::map<uint64_t, uint64_t> pcs;
  for (const auto &[key, n] : counts_)
    if (filter.accepts(key))
      pcs[key.stack[0]] += n;
  return pcs;
}

namespace {

std::string functionName(const SymbolInfo *symbol) {
  return symbol && !symbol->function.empty() ? symbol->function : std::string(kUnknown);
}

std::string modulePath(const ModuleInfo *module) {
  return module ? module->path : std::string(kUnknown);
}

std::string spaceOf(const Capture &capture, const ProfileKey &key) {
  if (key.inSyscall)
    return std::string(kSyscallSpace);
  return modulePath(capture.moduleFor(key.stack[0]));
}

using FunctionId = std::pair<std::string, std::string>;                       // function, module
using CallSite = std::tuple<std::string, std::string, std::string, uint32_t>; // + file, line

std::vector<CallerRow> sortedCallers(const std::map<CallSite, uint64_t> &sites) {
  std::vector<CallerRow> rows;
  for (const auto &[site, n] : sites) {
    const auto &[function, module, file, line] = site;
    rows.push_back({function, module, file, line, n});
  }
  // The map already orders equal counts by name; a stable sort keeps that order.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const CallerRow &a, const CallerRow &b) { return a.samples > b.samples; });
  return rows;
}

} // namespace

std::vector<MatrixRow> Profile::matrix(const Capture &capture, const SampleFilter &filter,
                                       bool perThread) const {
  std::map<uint64_t, MatrixRow> rows;
  for (const auto &[key, n] : counts_) {
    if (!filter.accepts(key))
      continue;
    uint64_t id = perThread ? key.tid : static_cast<uint64_t>(capture.header.pid);
    MatrixRow &row = rows[id];
    row.id = id;
    row.spaces[spaceOf(capture, key)] += n;
    row.samples += n;
  }
  std::vector<MatrixRow> out;
  for (auto &[id, row] : rows)
    out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(),
                   [](const MatrixRow &a, const MatrixRow &b) { return a.samples > b.samples; });
  return out;
}

std::vector<MatrixRow> Profile::byProcess(const Capture &capture,
                                          const SampleFilter &filter) const {
  return matrix(capture, filter, false);
}

std::vector<MatrixRow> Profile::byThread(const Capture &capture, const SampleFilter &filter) const {
  return matrix(capture, filter, true);
}

std::vector<SpaceRow> Profile::byModule(const Capture &capture, const SampleFilter &filter) const {
  std::map<std::string, uint64_t> spaces;
  for (const auto &[key, n] : counts_)
    if (filter.accepts(key))
      spaces[spaceOf(capture, key)] += n;
  std::vector<SpaceRow> out;
  for (const auto &[space, n] : spaces)
    out.push_back({space, n});
  std::stable_sort(out.begin(), out.end(),
                   [](const SpaceRow &a, const SpaceRow &b) { return a.samples > b.samples; });
  return out;
}

std::vector<FunctionRow> Profile::byFunction(const Capture &capture,
                                             const SampleFilter &filter) const {
  std::map<FunctionId, FunctionRow> rows;
  std::map<FunctionId, std::map<CallSite, uint64_t>> callers;
  for (const auto &[key, n] : counts_) {
    if (!filter.accepts(key))
      continue;
    FrameSymbols leaf = frameAt(capture, key.stack, 0);
    FunctionId id{functionName(leaf.symbol), modulePath(leaf.module)};
    rows[id].self += n;

    CallSite site;
    if (key.stack.size() > 1) {
      FrameSymbols caller = frameAt(capture, key.stack, 1);
      site = {functionName(caller.symbol), modulePath(caller.module),
              caller.symbol ? caller.symbol->file : "", caller.symbol ? caller.symbol->line : 0};
    }
    callers[id][site] += n;

    // Recursion puts a function on the stack more than once; it still took this sample once.
    std::set<FunctionId> onStack;
    for (size_t i = 0; i < key.stack.size(); ++i) {
      FrameSymbols frame = frameAt(capture, key.stack, i);
      onStack.insert({functionName(frame.symbol), modulePath(frame.module)});
    }
    for (const FunctionId &f : onStack)
      rows[f].inclusive += n;
  }

  std::vector<FunctionRow> out;
  for (auto &[id, row] : rows) {
    row.function = id.first;
    row.module = id.second;
    row.callers = sortedCallers(callers[id]);
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const FunctionRow &a, const FunctionRow &b) {
    return std::tie(b.self, b.inclusive) < std::tie(a.self, a.inclusive);
  });
  return out;
}

std::vector<LineRow> Profile::byLine(const Capture &capture, const SampleFilter &filter) const {
  // Lines are file:line pairs; pcs without line info group per function instead.
  using LineId = std::tuple<std::string, uint32_t, std::string>;
  std::map<LineId, std::map<std::string, uint64_t>> lines; // -> function -> samples
  for (const auto &[key, n] : counts_) {
    if (!filter.accepts(key))
      continue;
    const SymbolInfo *symbol = capture.symbolFor(key.stack[0]);
    std::string function = functionName(symbol);
    if (symbol && !symbol->file.empty())
      lines[{symbol->file, symbol->line, ""}][function] += n;
    else
      lines[{"", 0, function}][function] += n;
  }
  std::vector<LineRow> out;
  for (const auto &[id, functions] : lines) {
    LineRow row{std::get<0>(id), std::get<1>(id), {}, 0};
    std::vector<std::pair<uint64_t, std::string>> ranked;
    for (const auto &[function, n] : functions) {
      row.samples += n;
      ranked.emplace_back(n, function);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto &a, const auto &b) { return a.first > b.first; });
    for (auto &[n, function] : ranked)
      row.functions.push_back(std::move(function));
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const LineRow &a, const LineRow &b) { return a.samples > b.samples; });
  return out;
}

std::vector<InstructionRow> Profile::byInstruction(const Capture &capture,
                                                   const SampleFilter &filter) const {
  std::vector<InstructionRow> out;
  for (const auto &[pc, n] : byPc(filter)) {
    InstructionRow row;
    row.pc = pc;
    row.samples = n;
    const ModuleInfo *module = capture.moduleFor(pc);
    row.module = modulePath(module);
    row.moduleOffset = module ? pc - module->bias : pc;
    if (const SymbolInfo *symbol = capture.symbolFor(pc); symbol && !symbol->function.empty()) {
      row.function = symbol->function;
      row.functionOffset = symbol->start && pc >= symbol->start ? pc - symbol->start : 0;
      row.inlined = symbol->inlined;
    }
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const InstructionRow &a, const InstructionRow &b) {
    return a.samples > b.samples;
  });
  return out;
}

std::vector<std::pair<ProfileKey, uint64_t>> Profile::stacks(const SampleFilter &filter) const {
  std::vector<std::pair<ProfileKey, uint64_t>> out;
  for (const auto &[key, n] : counts_)
    if (filter.accepts(key))
      out.emplace_back(key, n);
  std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
    const ProfileKey &x = a.first, &y = b.first;
    return std::tie(x.tid, x.stack, x.onCpu, x.inSyscall) <
           std::tie(y.tid, y.stack, y.onCpu, y.inSyscall);
  });
  return out;
}

} // namespace strobe
