#include "report/Annotate.h"

#include "isa/Disassembler.h"
#include "report/ProfileReport.h"
#include "report/Table.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <set>

namespace strobe {

namespace {

struct FunctionRef {
  std::string name;
  uint64_t start = 0;
  uint64_t size = 0;
};

// Every function the capture's symbol tables name, by entry address.
std::map<std::pair<std::string, uint64_t>, FunctionRef> knownFunctions(const Capture &capture) {
  std::map<std::pair<std::string, uint64_t>, FunctionRef> known;
  auto note = [&](const SymbolInfo &s) {
    if (s.function.empty())
      return;
    FunctionRef &f = known[{s.function, s.start}];
    f.name = s.function;
    f.start = s.start;
    f.size = std::max(f.size, s.size);
  };
  for (const auto &[pc, symbol] : capture.symbols)
    note(symbol);
  for (const auto &[pc, symbol] : capture.instructionLines)
    note(symbol);
  return known;
}

std::string describe(const Capture &capture, const FunctionRef &f) {
  const ModuleInfo *module = capture.moduleFor(f.start);
  return fmt::format("{} at {:#x} ({})", f.name, f.start,
                     module ? shortName(module->path) : std::string(kUnknown));
}

std::optional<uint64_t> parseAddress(const std::string &text) {
  uint64_t value = 0;
  if (!text.starts_with("0x"))
    return std::nullopt;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data() + 2, end, value, 16);
  return ec == std::errc() && ptr == end ? std::optional(value) : std::nullopt;
}

// Exact name first, then a unique substring; an address ("0x401000") picks the function that
// holds it, which is how two functions of the same name are told apart.
FunctionRef findFunction(const Capture &capture, const Profile &profile, const std::string &query) {
  auto known = knownFunctions(capture);
  std::vector<FunctionRef> exact, partial;
  std::optional<uint64_t> address = parseAddress(query);
  for (const auto &[key, f] : known) {
    bool holds =
        address && (*address == f.start || (*address > f.start && *address < f.start + f.size));
    if (f.name == query || holds)
      exact.push_back(f);
    else if (f.name.find(query) != std::string::npos)
      partial.push_back(f);
  }
  const std::vector<FunctionRef> &matches = exact.empty() ? partial : exact;
  if (matches.size() == 1)
    return matches.front();
  if (matches.empty()) {
    std::vector<std::string> top;
    for (const FunctionRow &row : profile.byFunction(capture, {}))
      if (row.self > 0 && row.function != kUnknown && top.size() < 5)
        top.push_back(row.function);
    throw ReportError(fmt::format("no function matches '{}'{}", query,
                                  top.empty()
                                      ? std::string(" (no symbolized samples)")
                                      : fmt::format("; most sampled: {}", fmt::join(top, ", "))));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < matches.size() && i < 8; ++i)
    names.push_back(describe(capture, matches[i]));
  if (matches.size() > names.size())
    names.push_back(fmt::format("and {} more", matches.size() - names.size()));
  throw ReportError(fmt::format("'{}' matches {} functions: {}; name one exactly or by address",
                                query, matches.size(), fmt::join(names, ", ")));
}

// Counts share cells relative to the function's own samples; zero stays blank so hot spots show.
std::vector<Cell> countCells(uint64_t samples, uint64_t functionSamples) {
  if (samples == 0)
    return {{}, {}};
  return {{fmt::format("{}", samples), ""},
          {fmt::format("{:.1f}%", 100.0 * samples / functionSamples), ""}};
}

Table::Row row(std::vector<Cell> counts, std::string third, std::string fourth) {
  counts.push_back({std::move(third), ""});
  counts.push_back({std::move(fourth), ""});
  return {std::move(counts), {}, {}};
}

Table::Row totalRow(uint64_t functionSamples) {
  Table::Row total = row(countCells(functionSamples, functionSamples), "", "total");
  total.cells[0].text = fmt::format("{}", functionSamples); // a total of 0 is still said
  return total;
}

std::string lineMarker(const SymbolInfo &line) {
  std::string marker = fmt::format("; {}:{}", shortName(line.file), line.line);
  if (!line.inlined.empty())
    marker += fmt::format(" [inlined: {}]", fmt::join(line.inlined, " < "));
  return marker;
}

// The function's bytes as instructions, in order; a byte that starts none is a `.byte` row.
std::vector<Instruction> listing(Isa isa, const std::vector<uint8_t> &bytes, uint64_t start) {
  Disassembler disassembler(isa);
  std::vector<Instruction> out;
  for (size_t offset = 0; offset < bytes.size();) {
    const uint64_t address = start + offset;
    std::optional<Instruction> insn =
        disassembler.decode(std::span(bytes).subspan(offset), address);
    out.push_back(insn ? std::move(*insn)
                       : Instruction{address, 1, fmt::format(".byte {:#04x}", bytes[offset]), {}});
    offset += out.back().length;
  }
  return out;
}

std::string assemblySection(const Capture &capture, const FunctionRef &f,
                            const std::map<uint64_t, uint64_t> &pcs, uint64_t functionSamples) {
  auto code = capture.code.find(f.start);
  if (code == capture.code.end())
    return fmt::format("no machine code of {} in this capture\n", f.name);
  const std::vector<uint8_t> &bytes = code->second;
  std::map<uint64_t, std::string> entries; // direct branches into a known function name it
  for (const auto &[key, known] : knownFunctions(capture))
    entries[known.start] = known.name;

  const std::vector<Instruction> instructions = listing(capture.header.isa, bytes, f.start);
  const uint64_t end = f.start + bytes.size();
  Table table({{"samples", ""},
               {"fn%", ""},
               {"address", "", Table::Align::Left},
               {"instruction", "", Table::Align::Left}});
  const SymbolInfo *lastLine = nullptr;
  uint64_t listed = 0;
  // A run of unsampled nops (the padding compilers put before aligned loops) is one row, which a
  // branch into the run splits so that its target keeps a row of its own.
  std::set<uint64_t> targets;
  for (const Instruction &insn : instructions)
    if (insn.branchTarget && *insn.branchTarget >= f.start && *insn.branchTarget < end)
      targets.insert(*insn.branchTarget);
  struct Padding {
    uint64_t address = 0;
    size_t count = 0, bytes = 0;
    std::string first; // its text, for a run of one
  } padding;
  auto endPadding = [&] {
    if (padding.count == 0)
      return;
    std::string text = padding.count == 1 ? padding.first
                                          : fmt::format("nop ({} nops, {} bytes of padding)",
                                                        padding.count, padding.bytes);
    table.add(row(countCells(0, functionSamples), fmt::format("{:#x}", padding.address), text));
    padding = {};
  };
  for (const Instruction &insn : instructions) {
    const uint64_t address = insn.address;
    auto line = capture.instructionLines.find(address);
    if (line != capture.instructionLines.end() && !line->second.file.empty() &&
        (!lastLine || lastLine->file != line->second.file || lastLine->line != line->second.line ||
         lastLine->inlined != line->second.inlined)) {
      endPadding();
      table.add(row({{}, {}}, "", lineMarker(line->second)));
      lastLine = &line->second;
    }
    std::string text = insn.text;
    if (insn.branchTarget) {
      uint64_t target = *insn.branchTarget;
      if (auto entry = entries.find(target); entry != entries.end())
        text += fmt::format(" <{}>", entry->second);
      else if (target > f.start && target < end)
        text += fmt::format(" <{}+{:#x}>", f.name, target - f.start);
    }
    auto hit = pcs.find(address);
    uint64_t samples = hit == pcs.end() ? 0 : hit->second;
    listed += samples;
    if (samples == 0 && (text == "nop" || text.starts_with("nop "))) {
      if (targets.count(address))
        endPadding();
      if (padding.count++ == 0) {
        padding.address = address;
        padding.first = text;
      }
      padding.bytes += insn.length;
      continue;
    }
    endPadding();
    table.add(row(countCells(samples, functionSamples), fmt::format("{:#x}", address), text));
  }
  endPadding();
  table.setTotal(totalRow(functionSamples));
  std::string out = table.text();
  if (listed < functionSamples)
    out += fmt::format("{} samples hit addresses where no listed instruction starts\n",
                       functionSamples - listed);
  return out;
}

using LineKey = std::pair<std::string, uint32_t>;

// Source files read once per report; nullopt when the file cannot be read here.
class SourceFiles {
public:
  const std::optional<std::vector<std::string>> &lines(const std::string &path) {
    auto [it, inserted] = files_.try_emplace(path);
    if (inserted) {
      std::ifstream in(path);
      if (in) {
        it->second.emplace();
        for (std::string text; std::getline(in, text);) {
          if (!text.empty() && text.back() == '\r')
            text.pop_back();
          it->second->push_back(std::move(text));
        }
      }
    }
    return it->second;
  }
  std::string text(const std::string &path, uint32_t line) {
    const auto &all = lines(path);
    return all && line >= 1 && line <= all->size() ? (*all)[line - 1] : std::string();
  }

private:
  std::map<std::string, std::optional<std::vector<std::string>>> files_;
};

std::string sourceSection(const Capture &capture, const FunctionRef &f,
                          const std::map<uint64_t, uint64_t> &pcs, uint64_t functionSamples) {
  auto lineOf = [&](uint64_t pc) -> const SymbolInfo * {
    auto it = capture.instructionLines.find(pc);
    return it != capture.instructionLines.end() ? &it->second : capture.symbolFor(pc);
  };
  std::map<LineKey, uint64_t> counts;
  std::map<std::string, uint64_t> fileSamples;
  for (const auto &[pc, n] : pcs)
    if (const SymbolInfo *s = lineOf(pc); s && !s->file.empty()) {
      counts[{s->file, s->line}] += n;
      fileSamples[s->file] += n;
    }
  auto code = capture.code.find(f.start);
  uint64_t extent =
      std::max<uint64_t>(f.size, code == capture.code.end() ? 0 : code->second.size());
  std::set<LineKey> generated; // lines the function has instructions for
  for (auto it = capture.instructionLines.lower_bound(f.start);
       it != capture.instructionLines.end() && it->first < f.start + extent; ++it)
    if (!it->second.file.empty())
      generated.insert({it->second.file, it->second.line});

  // The function's own file is the one its entry belongs to; inlined code lists other files.
  std::string primary;
  if (auto entry = capture.instructionLines.find(f.start);
      entry != capture.instructionLines.end() && !entry->second.file.empty()) {
    primary = entry->second.file;
    generated.insert({primary, entry->second.line});
  } else if (!fileSamples.empty()) {
    primary = std::max_element(fileSamples.begin(), fileSamples.end(), [](auto &a, auto &b) {
                return a.second < b.second;
              })->first;
  } else if (!generated.empty()) {
    primary = generated.begin()->first;
  }
  if (primary.empty())
    return fmt::format("no line information for {}\n", f.name);

  std::set<uint32_t> ownLines;
  for (const LineKey &key : generated)
    if (key.first == primary)
      ownLines.insert(key.second);
  for (const auto &[key, n] : counts)
    if (key.first == primary)
      ownLines.insert(key.second);

  SourceFiles files;
  bool readable = files.lines(primary).has_value();
  std::string out = readable
                        ? fmt::format("source: {}\n", primary)
                        : fmt::format("source: {} is not readable; line numbers only\n", primary);
  Table table({{"samples", ""},
               {"fn%", ""},
               {"line", "", Table::Align::Right},
               {"source", "", Table::Align::Left}});
  auto addLine = [&](uint32_t line) {
    auto it = counts.find({primary, line});
    uint64_t n = it == counts.end() ? 0 : it->second;
    table.add(
        row(countCells(n, functionSamples), fmt::format("{}", line), files.text(primary, line)));
  };
  // Lines between two of the function's own lines are shown (comments, braces) unless the gap
  // is wide enough to be some other code of the file, which an ellipsis stands for.
  constexpr uint32_t kWidestGap = 8;
  uint32_t previous = 0;
  for (uint32_t line : ownLines) {
    if (readable && previous && line - previous <= kWidestGap) {
      for (uint32_t between = previous + 1; between < line; ++between)
        addLine(between);
    } else if (readable && previous) {
      table.add(row({{}, {}}, "...", ""));
    }
    addLine(line);
    previous = line;
  }
  for (const auto &[key, n] : counts)
    if (key.first != primary)
      table.add(row(countCells(n, functionSamples),
                    fmt::format("{}:{}", shortName(key.first), key.second),
                    files.text(key.first, key.second)));
  table.setTotal(totalRow(functionSamples));
  return out + table.text();
}

} // namespace

std::string renderAnnotate(const Capture &capture, const AnnotateOptions &options) {
  Profile profile;
  for (const Sample &sample : capture.samples)
    profile.add(sample);
  return renderAnnotate(capture, profile, options);
}

std::string renderAnnotate(const Capture &capture, const Profile &profile,
                           const AnnotateOptions &options) {
  FunctionRef f = findFunction(capture, profile, options.function);
  SampleFilter filter{options.onCpuOnly, std::nullopt};
  std::map<uint64_t, uint64_t> pcs;
  uint64_t functionSamples = 0;
  for (const auto &[pc, n] : profile.byPc(filter)) {
    const SymbolInfo *s = capture.symbolFor(pc);
    if (s && s->function == f.name && s->start == f.start) {
      pcs[pc] = n;
      functionSamples += n;
    }
  }
  uint64_t total = profile.count(filter);
  std::string out =
      fmt::format("strobe annotate: {}, {} of {} samples ({:.1f}%, {})\n", describe(capture, f),
                  functionSamples, total, total ? 100.0 * functionSamples / total : 0.0,
                  options.onCpuOnly ? "on-CPU" : "wall-clock");
  bool assembly = options.assembly || !options.source;
  if (assembly)
    out += assemblySection(capture, f, pcs, functionSamples);
  if (options.source)
    out += (assembly ? "\n" : "") + sourceSection(capture, f, pcs, functionSamples);
  return out;
}

} // namespace strobe
