#include "codec/Crc32.h"
#include "codec/DiffDecoder.h"
#include "codec/Varint.h"
#include "io/TraceFile.h"
#include "io/TraceStreams.h"
#include "isa/InstructionInfo.h"
#include "strobe.pb.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

namespace strobe {
namespace {

using Bytes = std::span<const uint8_t>;

Bytes asBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

uint32_t readLe32(const std::string &s, size_t at) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= uint32_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return value;
}

class File {
public:
  explicit File(const std::string &path) : path_(path), file_(std::fopen(path.c_str(), "rb")) {
    if (!file_)
      throw TraceError("cannot open " + path + ": " + std::strerror(errno));
  }
  ~File() { std::fclose(file_); }
  File(const File &) = delete;
  File &operator=(const File &) = delete;

  // The whole file, read in steps of 1 MiB.
  std::string readAll() {
    constexpr size_t kStep = 1 << 20;
    std::string out;
    for (;;) {
      const size_t have = out.size();
      out.resize(have + kStep);
      const size_t got = std::fread(out.data() + have, 1, kStep, file_);
      out.resize(have + got);
      if (got < kStep) {
        if (std::ferror(file_))
          throw TraceError("cannot read " + path_ + ": " + std::strerror(errno));
        return out;
      }
    }
  }

private:
  std::string path_;
  FILE *file_;
};

// Decodes the chunks in file order into a Capture; each apply*() returns why a chunk is unusable,
// or nothing.
class Loader {
public:
  explicit Loader(std::string path) : path_(std::move(path)) {}

  LoadedTrace load() {
    File file(path_);
    // The whole file: after damage, the next chunk is searched for in it.
    const std::string data = file.readAll();
    const size_t start = kTraceMagic.size() + 1;
    if (data.size() < start || !data.starts_with(kTraceMagic))
      throw TraceError(path_ + " is not a strobe trace file");
    const unsigned version = static_cast<uint8_t>(data[start - 1]);
    if (version != kTraceFormatVersion)
      throw TraceError(path_ + " is a strobe trace of format version " + std::to_string(version) +
                       "; this strobe reads version " + std::to_string(kTraceFormatVersion));
    readChunks(data, start);
    if (!header_)
      throw TraceError(path_ + ": truncated after " + std::to_string(data.size()) +
                       " bytes (chunk 0); no header to load");
    return finish();
  }

private:
  // Applies the chunks from `offset` on. A chunk that is corrupt (or unusable) is skipped: the
  // next one is where its length says, or else at the next offset that holds a whole chunk, so
  // that damage costs only the chunks it hit. A cut-short file keeps every chunk before the cut.
  void readChunks(const std::string &data, size_t offset) {
    for (unsigned index = 0; offset < data.size(); ++index) {
      std::optional<std::string> problem;
      size_t end = data.size(); // of the chunk, as its length says
      const bool cutShort = !fitsTheFile(data, offset);
      if (cutShort) {
        problem = "its length reaches past the end";
      } else {
        end = offset + 8 + readLe32(data, offset);
        problem = applyChunk(std::string_view(data).substr(offset + 8, end - offset - 8),
                             readLe32(data, offset + 4));
      }
      if (!problem) {
        offset = end;
        continue;
      }
      const size_t next = !cutShort && (end == data.size() || wholeChunkAt(data, end))
                              ? end
                              : nextWholeChunk(data, offset + 1);
      // A cut-short last chunk, or a long one whose end was cut: nothing whole follows.
      if (cutShort && next == data.size()) {
        const std::string what = "truncated after " + std::to_string(data.size()) +
                                 " bytes (chunk " + std::to_string(index) + ")";
        if (!header_)
          throw TraceError(path_ + ": " + what + "; no header to load");
        warnings_.push_back(path_ + ": " + what + "; kept the " + keptBefore() + " before it");
        return;
      }
      const std::string where = "corrupt chunk " + std::to_string(index) + " at byte " +
                                std::to_string(offset) + " (" + *problem + ")";
      if (!header_)
        throw TraceError(path_ + ": " + where + "; no header to load");
      ++skipped_;
      if (next == end)
        warnings_.push_back(path_ + ": " + where + "; skipped it");
      else if (next < data.size())
        warnings_.push_back(path_ + ": " + where + "; skipped " + std::to_string(next - offset) +
                            " bytes to the next whole chunk, at byte " + std::to_string(next));
      else
        warnings_.push_back(path_ + ": " + where + "; nothing after it is readable");
      offset = next;
    }
  }

  // Whether the 8-byte prefix at `at` and the length it gives fit in `data`.
  static bool fitsTheFile(const std::string &data, size_t at) {
    const size_t left = data.size() - at;
    return left >= 8 && left - 8 >= readLe32(data, at);
  }

  // The first offset from `from` on where a whole chunk begins, or the size of `data`.
  static size_t nextWholeChunk(const std::string &data, size_t from) {
    while (from < data.size() && !wholeChunkAt(data, from))
      ++from;
    return from;
  }

  // Whether a chunk begins at `at` whose length fits the file, whose body is one submessage
  // field that fills it exactly (as every chunk strobe writes), and whose CRC matches. The shape
  // is tested first, so that the search after damage rarely computes a CRC.
  static bool wholeChunkAt(const std::string &data, size_t at) {
    if (!fitsTheFile(data, at))
      return false;
    const Bytes body = asBytes(data).subspan(at + 8, readLe32(data, at));
    Bytes in = body;
    uint64_t tag = 0, length = 0;
    if (!getVarint(in, tag) || tag >> 3 == 0 || (tag & 7) != 2 || !getVarint(in, length) ||
        length != in.size())
      return false;
    return crc32(body) == readLe32(data, at + 4);
  }

  std::optional<std::string> applyChunk(std::string_view bytes, uint32_t crc) {
    if (crc32(asBytes(bytes)) != crc)
      return "CRC mismatch";
    pb::Chunk chunk;
    if (bytes.size() > std::numeric_limits<int>::max() ||
        !chunk.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return "not a valid chunk";
    if (!header_ && !chunk.has_header())
      return "the first chunk is not a header";
    switch (chunk.body_case()) {
    case pb::Chunk::kHeader:
      if (header_)
        return "a second header";
      applyHeader(chunk.header());
      return std::nullopt;
    case pb::Chunk::kSamples:
      return applySamples(chunk.samples());
    case pb::Chunk::kThreads:
      for (const pb::Thread &thread : chunk.threads().threads())
        applyThread(thread);
      return std::nullopt;
    case pb::Chunk::kModules:
      // Each chunk adds modules the ones before it lacked (see TraceWriter::writeNames).
      for (const pb::Module &m : chunk.modules().modules())
        capture_.modules.push_back({m.path(), m.build_id(), m.start(), m.end(), m.bias()});
      return std::nullopt;
    case pb::Chunk::kSymbols:
      return applySymbolTable(chunk.symbols(), capture_.symbols);
    case pb::Chunk::kCode:
      for (const pb::Function &f : chunk.code().functions())
        capture_.code[f.start()].assign(f.code().begin(), f.code().end());
      return std::nullopt;
    case pb::Chunk::kInstructionLines:
      return applySymbolTable(chunk.instruction_lines(), capture_.instructionLines);
    case pb::Chunk::kStepTrace:
      return applyStepTrace(chunk.step_trace());
    case pb::Chunk::kAllocEvents:
      return applyAllocEvents(chunk.alloc_events());
    case pb::Chunk::kLoop:
      return applyLoop(chunk.loop());
    case pb::Chunk::kEnd:
      capture_.stops = chunk.end().stops();
      capture_.durationNs = chunk.end().duration_ns();
      capture_.endReason = chunk.end().end_reason();
      if (chunk.end().period_ns())
        capture_.header.periodNs = chunk.end().period_ns();
      ended_ = true;
      return std::nullopt;
    case pb::Chunk::BODY_NOT_SET:
      return std::nullopt; // a chunk kind newer than this reader
    }
    return std::nullopt;
  }

  std::optional<std::string> applyAllocEvents(const pb::AllocEvents &events) {
    for (const pb::AllocEvent &e : events.events()) {
      if (e.function() >= std::size(kAllocFunctionNames) ||
          e.part() > static_cast<uint32_t>(EventPart::ResultPart))
        return "a heap event of an unknown kind";
      AllocEvent event;
      event.timeNs = e.time_ns();
      event.tid = e.tid();
      event.function = static_cast<AllocFunction>(e.function());
      event.part = static_cast<EventPart>(e.part());
      event.pointer = e.pointer();
      event.size = e.size();
      event.previous = e.previous();
      event.previousSize = e.previous_size();
      event.stack.assign(e.stack().begin(), e.stack().end());
      capture_.allocEvents.push_back(std::move(event));
    }
    return std::nullopt;
  }

  std::optional<std::string> applyLoop(const pb::LoopCapture &loop) {
    if (loop.split() > static_cast<uint32_t>(LoopSplit::Count) ||
        loop.marker_tids_size() != loop.marker_times_ns_size())
      return "a malformed loop capture";
    LoopCaptureInfo info;
    info.location = loop.location();
    info.functionStart = loop.function_start();
    info.head = loop.head();
    info.wholeFunction = loop.whole_function();
    info.tid = loop.tid();
    info.split = static_cast<LoopSplit>(loop.split());
    info.expression = loop.expression();
    info.countT = loop.count_t();
    info.threadCpuNs = loop.thread_cpu_ns();
    for (int i = 0; i < loop.marker_tids_size(); ++i)
      info.markerHits.push_back({loop.marker_tids(i), loop.marker_times_ns(i)});
    for (const auto &[index, value] : loop.expression_values())
      info.expressionValues[index] = value;
    capture_.loop = std::move(info);
    return std::nullopt;
  }

  void applyThread(const pb::Thread &thread) {
    auto [it, added] = threadIndex_.try_emplace(thread.tid(), capture_.threads.size());
    if (added)
      capture_.threads.push_back({thread.tid(), thread.name()});
    else
      capture_.threads[it->second].name = thread.name();
  }

  void applyHeader(const pb::Header &h) {
    const std::optional<Isa> isa = isaFromName(h.isa());
    if (!isa)
      throw TraceError(path_ + " records the unknown ISA '" + h.isa() + "'");
    if (h.codec() != kRegisterCodecName || h.codec_version() < kOldestDiffVersion ||
        h.codec_version() > kDiffVersion)
      throw TraceError(path_ + " uses register codec '" + h.codec() + "' version " +
                       std::to_string(h.codec_version()) + ", which this strobe cannot read");
    CaptureHeader &header = capture_.header;
    header.isa = *isa;
    header.pid = h.pid();
    header.program = h.program();
    header.debugger = h.debugger();
    header.periodNs = h.period_ns();
    header.stackDepth = h.stack_depth();
    header.startUnixNs = h.start_unix_ns();
    header_ = true;
    fileRegisterCount_ = static_cast<size_t>(h.registers_size());
    mapRegisters(h);
    checkExtRegisters(h);
  }

  // Step records keep their extended state only when the file's ext table is this strobe's.
  void checkExtRegisters(const pb::Header &h) {
    const RegisterTable &table = registerTable(capture_.header.isa);
    extMatches_ = std::equal(h.ext_registers().begin(), h.ext_registers().end(), table.ext.begin(),
                             table.ext.end(), [](const pb::ExtRegister &a, const ExtRegister &b) {
                               return a.name() == b.name && a.bytes() == b.bytes;
                             });
  }

  // Places the file's registers by name when its table differs from this strobe's.
  void mapRegisters(const pb::Header &h) {
    const RegisterTable &table = registerTable(capture_.header.isa);
    if (std::equal(h.registers().begin(), h.registers().end(), table.regs.begin(),
                   table.regs.end()))
      return;
    remap_ = true;
    tableSize_ = table.regs.size();
    std::string dropped;
    for (const std::string &name : h.registers()) {
      const std::optional<unsigned> place = table.indexOf(name);
      registerPlace_.push_back(place);
      if (!place)
        dropped += (dropped.empty() ? "" : ", ") + name;
    }
    if (!dropped.empty())
      warnings_.push_back(path_ + ": registers not in this strobe's " + std::string(table.name) +
                          " table were dropped: " + dropped);
  }

  std::optional<std::string> applySamples(const pb::SampleBatch &batch) {
    std::vector<Sample> decoded;
    Bytes in = asBytes(batch.data());
    uint64_t time = 0;
    std::vector<uint64_t> stack;
    std::vector<size_t> withRegisters; // indexes into `decoded`
    while (!in.empty()) {
      Sample &sample = decoded.emplace_back();
      sample.tid = batch.tid();
      uint64_t delta = 0, head = 0;
      if (!getVarint(in, delta) || !getVarint(in, head) || (head >> 3) > in.size())
        return "bad sample data";
      time += static_cast<uint64_t>(unzigzag(delta));
      sample.timeNs = time;
      sample.onCpu = head & 1;
      sample.inSyscall = head & 2;
      stack.resize(head >> 3);
      for (uint64_t &pc : stack) {
        if (!getVarint(in, delta))
          return "bad sample data";
        pc += static_cast<uint64_t>(unzigzag(delta));
      }
      sample.stack = stack;
      if (head & 4)
        withRegisters.push_back(decoded.size() - 1);
    }
    if (!withRegisters.empty() || !batch.registers().empty()) {
      DecodedStream registers = decodeStream(asBytes(batch.registers()));
      if (!registers.report.clean() || registers.records.size() != withRegisters.size() ||
          registers.report.header->layout.mainCount != fileRegisterCount_ ||
          registers.report.header->layout.extSlots != 0)
        return "bad register data";
      for (size_t i = 0; i < withRegisters.size(); ++i)
        placeRegisters(std::move(registers.records[i].regs), decoded[withRegisters[i]].regs);
    }
    std::move(decoded.begin(), decoded.end(), std::back_inserter(samples_));
    return std::nullopt;
  }

  // This strobe's memory operand model, if it is the one the stream's slots were computed with;
  // without it only records whose accesses are all in escape form decode.
  MemoryOperandModel *modelFor(const std::string &stream) {
    Bytes in = asBytes(stream);
    StreamHeader header;
    if (readStreamHeader(in, header) || header.memoryModel != kMemoryModelName)
      return nullptr;
    if (!memoryModel_)
      memoryModel_ = std::make_unique<InstructionDecoder>(capture_.header.isa);
    return memoryModel_.get();
  }

  void placeRegisters(std::vector<uint64_t> fileRegs, std::vector<uint64_t> &regs) const {
    if (!remap_) {
      regs = std::move(fileRegs);
      return;
    }
    regs.assign(tableSize_, 0);
    for (size_t i = 0; i < fileRegs.size(); ++i)
      if (registerPlace_[i])
        regs[*registerPlace_[i]] = fileRegs[i];
  }

  // What a truncation leaves: the samples, and the step records when there are any.
  std::string keptBefore() const {
    uint64_t steps = 0;
    for (const StepTrace &trace : capture_.stepTraces)
      steps += trace.size();
    const std::string samples = std::to_string(samples_.size()) + " samples";
    const std::string records = std::to_string(steps) + " step records";
    if (steps == 0)
      return samples;
    return samples_.empty() ? records : samples + " and " + records;
  }

  std::optional<std::string> applyStepTrace(const pb::StepTraceChunk &part) {
    std::vector<StepTrace> &traces = capture_.stepTraces;
    auto placed = traceAt_.find(part.index());
    // Traces come in order, unless damage took every chunk of one.
    if (placed == traceAt_.end() && part.index() != traceAt_.size() && skipped_ == 0)
      return "step trace " + std::to_string(part.index()) + " before trace " +
             std::to_string(traceAt_.size());
    DecodedStream decoded = decodeStream(asBytes(part.stream()), modelFor(part.stream()));
    if (!decoded.report.clean())
      return "bad step records (" +
             (decoded.report.damage.empty() ? std::string("no header")
                                            : decoded.report.damage[0].reason) +
             ")";
    const StreamHeader &header = *decoded.report.header;
    if (header.layout.mainCount != fileRegisterCount_ || header.layout.isa != capture_.header.isa)
      return "step records of another register table";
    if (header.layout.extSlots > 0 && !extMatches_ && !warnedExt_) {
      warnings_.push_back(path_ + ": the step traces' extended registers differ from this "
                                  "strobe's and were dropped");
      warnedExt_ = true;
    }
    if (placed == traceAt_.end()) {
      placed = traceAt_.emplace(part.index(), Placed{traces.size(), 0}).first;
      traces.emplace_back(capture_.header.isa, part.tid(), part.memory());
    }
    StepTrace &trace = traces[placed->second.position];
    // Damage took chunks of this trace before this one: it does not run on unbroken.
    if (part.has_first_record()) {
      if (part.first_record() != placed->second.nextRecord && !decoded.records.empty()) {
        decoded.records.front().gap = true;
        trace.numberNext(part.first_record());
      }
      placed->second.nextRecord = part.first_record() + decoded.records.size();
    }
    for (TraceRecord &record : decoded.records) {
      placeRegisters(std::move(record.regs), record.regs);
      if (!extMatches_)
        record.ext.clear();
      trace.append(record);
    }
    return std::nullopt;
  }

  static std::optional<std::string> applySymbolTable(const pb::SymbolTable &table,
                                                     std::map<uint64_t, SymbolInfo> &out) {
    const auto &strings = table.strings();
    auto valid = [&](uint32_t index) { return index < static_cast<uint32_t>(strings.size()); };
    std::map<uint64_t, SymbolInfo> decoded;
    uint64_t pc = 0;
    for (const pb::Symbol &s : table.symbols()) {
      if (!valid(s.function()) || !valid(s.file()) ||
          !std::all_of(s.inlined().begin(), s.inlined().end(), valid))
        return "bad string index";
      pc += s.pc_delta();
      SymbolInfo &info = decoded[pc];
      info.function = strings[s.function()];
      info.start = s.start();
      info.size = s.size();
      info.file = strings[s.file()];
      info.line = s.line();
      for (uint32_t index : s.inlined())
        info.inlined.push_back(strings[index]);
    }
    for (auto &[at, info] : decoded)
      out.insert_or_assign(at, std::move(info));
    return std::nullopt;
  }

  LoadedTrace finish() {
    std::stable_sort(samples_.begin(), samples_.end(), [](const Sample &a, const Sample &b) {
      return a.timeNs != b.timeNs ? a.timeNs < b.timeNs : a.tid < b.tid;
    });
    capture_.samples = std::move(samples_);
    if (!ended_)
      warnings_.push_back(path_ + ": the capture did not finish (no end chunk); modules and "
                                  "symbols may be missing");
    return {std::move(capture_), std::move(warnings_)};
  }

  std::string path_;
  Capture capture_;
  std::vector<std::string> warnings_;
  std::vector<Sample> samples_;                      // in file order; sorted by time at the end
  std::unordered_map<uint64_t, size_t> threadIndex_; // into capture_.threads
  unsigned skipped_ = 0;                             // damaged chunks skipped so far
  struct Placed {
    size_t position;     // in capture_.stepTraces
    uint64_t nextRecord; // the first_record of its next chunk, unless one was lost
  };
  std::unordered_map<uint32_t, Placed> traceAt_; // by the file's step trace index
  bool header_ = false;
  bool ended_ = false;
  size_t fileRegisterCount_ = 0;
  // Set when the file's register table differs from this strobe's: where each file register goes.
  bool remap_ = false;
  std::vector<std::optional<size_t>> registerPlace_;
  size_t tableSize_ = 0;
  bool extMatches_ = true;
  bool warnedExt_ = false;
  std::unique_ptr<InstructionDecoder> memoryModel_; // for step traces' memory slots
};

} // namespace

LoadedTrace loadCapture(const std::string &path) { return Loader(path).load(); }

} // namespace strobe
