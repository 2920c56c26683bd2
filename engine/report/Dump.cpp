#include "report/Dump.h"

#include "isa/Disassembler.h"
#include "report/Annotate.h"
#include "report/TenetText.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

namespace strobe {
namespace {

using Out = std::back_insert_iterator<std::string>;

// " <function+0x12>" when the capture symbolized `pc` (as `symbol`), else nothing.
std::string symbolSuffix(const SymbolInfo *symbol, uint64_t pc) {
  if (!symbol || symbol->function.empty())
    return {};
  return pc > symbol->start && symbol->start != 0
             ? fmt::format(" <{}+0x{:x}>", symbol->function, pc - symbol->start)
             : fmt::format(" <{}>", symbol->function);
}

std::string symbolSuffix(const Capture &capture, uint64_t pc) {
  return symbolSuffix(capture.symbolFor(pc), pc);
}

// "0x401a2c <function+0x2c>", padded to the width its function's last offset would take, so that
// the instructions of one function line up in a column whatever their offsets.
std::string locationText(const Capture &capture, uint64_t pc) {
  const SymbolInfo *symbol = capture.symbolFor(pc);
  std::string text = fmt::format("0x{:x}{}", pc, symbolSuffix(symbol, pc));
  if (symbol && !symbol->function.empty() && symbol->start != 0 && symbol->size > 1)
    text.resize(std::max(text.size(), fmt::formatted_size("0x{:x} <{}+0x{:x}>", pc,
                                                          symbol->function, symbol->size - 1)),
                ' ');
  return text;
}

std::string instructionText(Disassembler &disassembler, std::span<const uint8_t> bytes,
                            uint64_t pc) {
  if (auto insn = disassembler.decode(bytes, pc))
    return insn->text;
  std::string hex = "(bytes";
  for (uint8_t byte : bytes)
    hex += fmt::format(" {:02x}", byte);
  return hex + ")";
}

// A memory value as a number when it is one (up to 8 bytes, little-endian), else its bytes.
std::string valueText(const std::vector<uint8_t> &value) {
  if (value.size() <= 8) {
    uint64_t number = 0;
    for (size_t k = 0; k < value.size(); ++k)
      number |= uint64_t{value[k]} << (8 * k);
    return fmt::format("0x{:x}", number);
  }
  std::string hex;
  for (uint8_t byte : value)
    hex += fmt::format("{:02x}", byte);
  return "bytes " + hex;
}

// Registers of `record` that differ from `previous` (all of them without one), as name=value.
void appendRegisters(const RegisterTable &table, const TraceRecord &record,
                     const TraceRecord *previous, std::string &out) {
  for (size_t r = 0; r < record.regs.size() && r < table.regs.size(); ++r)
    if (!previous || r >= previous->regs.size() || record.regs[r] != previous->regs[r])
      fmt::format_to(Out(out), " {}=0x{:x}", table.regs[r], record.regs[r]);
  size_t slot = 0;
  for (const ExtRegister &reg : table.ext) {
    const size_t slots = reg.bytes / 8;
    if (slot + slots > record.ext.size())
      break;
    bool changed = !previous || previous->ext.size() != record.ext.size();
    for (size_t k = 0; k < slots && !changed; ++k)
      changed = record.ext[slot + k] != previous->ext[slot + k];
    if (changed) {
      // Most significant slot first, without leading zero slots.
      std::string hex;
      for (size_t k = slots; k-- > 0;)
        if (!hex.empty())
          hex += fmt::format("{:016x}", record.ext[slot + k]);
        else if (record.ext[slot + k] != 0 || k == 0)
          hex = fmt::format("{:x}", record.ext[slot + k]);
      fmt::format_to(Out(out), " {}=0x{}", reg.name, hex);
    }
    slot += slots;
  }
}

void appendMemory(const TraceRecord &record, std::string &out) {
  for (const MemoryAccess &a : record.memory) {
    if (a.read)
      fmt::format_to(Out(out), "  read [0x{:x}]:{}={}", a.address, a.size, valueText(a.readValue));
    if (a.write)
      fmt::format_to(Out(out), "  write [0x{:x}]:{}={}", a.address, a.size,
                     valueText(a.writtenValue));
  }
}

// Hands `out` to `sink` (if any) once it has grown to a piece.
void passPiece(std::string &out, const TextSink *sink) {
  constexpr size_t kPieceBytes = 1 << 20;
  if (sink && out.size() >= kPieceBytes) {
    (*sink)(out);
    out.clear();
  }
}

void appendStepTrace(const Capture &capture, const StepTrace &trace, Disassembler &disassembler,
                     std::string &out, const TextSink *sink) {
  const RegisterTable &table = registerTable(capture.header.isa);
  fmt::format_to(Out(out), "step trace of thread {}: {} records{}\n", trace.tid(), trace.size(),
                 trace.memoryRecorded() ? ", with memory" : "");
  uint64_t i = 0;
  TraceRecord previous;
  trace.forEach([&](const TraceRecord &record) {
    const bool fresh = i == 0 || record.gap;
    fmt::format_to(Out(out), "{:>7}  ", trace.numberAt(i++));
    if (fresh) {
      out += record.gap ? "(after a gap)" : "(start)";
    } else {
      const uint64_t pc = previous.regs[table.pc];
      fmt::format_to(Out(out), "{}  {:<32}", locationText(capture, pc),
                     instructionText(disassembler, record.instruction, pc));
    }
    appendRegisters(table, record, fresh ? nullptr : &previous, out);
    appendMemory(record, out);
    out += '\n';
    previous = record;
    passPiece(out, sink);
  });
}

bool wanted(const DumpOptions &options, uint64_t tid) {
  return !options.tid || *options.tid == tid;
}

// A --thread that names no thread with records is a mistake to report, not an empty dump.
void requireThread(const Capture &capture, const DumpOptions &options) {
  if (!options.tid)
    return;
  std::set<uint64_t> threads;
  if (options.steps)
    for (const StepTrace &trace : capture.stepTraces)
      threads.insert(trace.tid());
  if (options.samples)
    for (const Sample &sample : capture.samples)
      threads.insert(sample.tid);
  if (!threads.count(*options.tid))
    throw ReportError(threads.empty() ? fmt::format("no records of thread {}", *options.tid)
                                      : fmt::format("no records of thread {}; threads: {}",
                                                    *options.tid, fmt::join(threads, ", ")));
}

// `traced`: step traces came first, under which "samples: 0" would only be noise.
void appendSamples(const Capture &capture, const DumpOptions &options, bool traced,
                   std::string &out, const TextSink &sink) {
  const RegisterTable &table = registerTable(capture.header.isa);
  std::map<uint64_t, TraceRecord> previous; // per thread
  size_t shown = 0;
  for (const Sample &sample : capture.samples)
    shown += wanted(options, sample.tid);
  if (shown == 0 && traced)
    return;
  fmt::format_to(Out(out), "samples: {}\n", shown);
  size_t index = 0;
  for (const Sample &sample : capture.samples) {
    if (!wanted(options, sample.tid))
      continue;
    const uint64_t pc = sample.stack.empty() ? 0 : sample.stack[0];
    fmt::format_to(Out(out), "{:>7}  {:.6f} s  thread {}  0x{:x}{}{}{}", index++,
                   static_cast<double>(sample.timeNs) / 1e9, sample.tid, pc,
                   symbolSuffix(capture, pc), sample.onCpu ? "" : " (off cpu)",
                   sample.inSyscall ? " (in syscall)" : "");
    if (!sample.regs.empty()) {
      TraceRecord record;
      record.regs = sample.regs;
      auto it = previous.find(sample.tid);
      appendRegisters(table, record, it == previous.end() ? nullptr : &it->second, out);
      previous[sample.tid] = std::move(record);
    }
    out += '\n';
    passPiece(out, &sink);
  }
}

void writeTenet(const Capture &capture, const DumpOptions &options, const TextSink &sink) {
  std::set<uint64_t> threads;
  if (options.steps)
    for (const StepTrace &trace : capture.stepTraces)
      if (wanted(options, trace.tid()))
        threads.insert(trace.tid());
  const bool fromSamples = threads.empty() && options.samples;
  if (fromSamples)
    for (const Sample &sample : capture.samples)
      if (wanted(options, sample.tid) && !sample.regs.empty())
        threads.insert(sample.tid);
  if (threads.empty())
    throw ReportError(options.tid ? fmt::format("no records of thread {}", *options.tid)
                                  : std::string("the capture holds no records to dump"));
  if (threads.size() > 1)
    throw ReportError(fmt::format("a Tenet trace holds one thread; choose one of {} with --thread",
                                  fmt::join(threads, ", ")));
  const uint64_t tid = *threads.begin();
  std::string out;
  TenetWriter tenet(capture.header.isa, out);
  if (fromSamples) {
    for (const Sample &sample : capture.samples)
      if (sample.tid == tid && !sample.regs.empty()) {
        tenet.add({sample.regs, {}, {}, {}, false});
        passPiece(out, &sink);
      }
  } else {
    bool any = false;
    for (const StepTrace &trace : capture.stepTraces)
      if (trace.tid() == tid) {
        bool first = true;
        trace.forEach([&](const TraceRecord &record) {
          if (first && any) { // a later trace does not follow from the earlier one
            TraceRecord afterGap = record;
            afterGap.gap = true;
            tenet.add(afterGap);
          } else {
            tenet.add(record);
          }
          first = false;
          any = true;
          passPiece(out, &sink);
        });
      }
  }
  tenet.finish();
  sink(out);
}

} // namespace

std::string renderStepTrace(const Capture &capture, const StepTrace &trace) {
  Disassembler disassembler(capture.header.isa);
  std::string out;
  appendStepTrace(capture, trace, disassembler, out, nullptr);
  return out;
}

void writeDump(const Capture &capture, const DumpOptions &options, const TextSink &sink) {
  requireThread(capture, options);
  if (options.format == DumpFormat::Tenet)
    return writeTenet(capture, options, sink);
  Disassembler disassembler(capture.header.isa);
  std::string out;
  bool traced = false;
  if (options.steps)
    for (const StepTrace &trace : capture.stepTraces)
      if (wanted(options, trace.tid())) {
        appendStepTrace(capture, trace, disassembler, out, &sink);
        traced = true;
      }
  if (options.samples)
    appendSamples(capture, options, traced, out, sink);
  sink(out);
}

} // namespace strobe
