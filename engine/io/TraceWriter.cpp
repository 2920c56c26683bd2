#include "codec/Crc32.h"
#include "codec/DiffEncoder.h"
#include "codec/Varint.h"
#include "io/TraceFile.h"
#include "io/TraceStreams.h"
#include "strobe.pb.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace strobe {
namespace {

// Large enough that the chunk prefix and keyframe cost little, small enough that a crash between
// flushes loses little.
constexpr size_t kBatchBytes = 64 * 1024;
// Heap events per chunk: about 100 bytes each with 16-frame stacks, so chunks stay near 400 KiB.
constexpr size_t kAllocEventsPerChunk = 4096;

// One thread's batch in progress.
struct ThreadStream {
  std::unique_ptr<DiffEncoder> registers;
  std::vector<uint8_t> data;
  uint64_t previousTime = 0;
  std::vector<uint64_t> previousStack;
  TraceRecord record; // reused: the sample's registers as a codec record

  size_t size() const { return data.size() + registers->size(); }
};

void encodeSample(const Sample &sample, ThreadStream &stream) {
  std::vector<uint8_t> &out = stream.data;
  putVarint(zigzag(static_cast<int64_t>(sample.timeNs - stream.previousTime)), out);
  const bool hasRegisters = !sample.regs.empty();
  putVarint(uint64_t{sample.onCpu} | uint64_t{sample.inSyscall} << 1 | uint64_t{hasRegisters} << 2 |
                uint64_t{sample.stack.size()} << 3,
            out);
  for (size_t i = 0; i < sample.stack.size(); ++i) {
    const uint64_t previous = i < stream.previousStack.size() ? stream.previousStack[i] : 0;
    putVarint(zigzag(static_cast<int64_t>(sample.stack[i] - previous)), out);
  }
  if (hasRegisters) {
    stream.record.regs = sample.regs;
    stream.registers->encode(stream.record);
  }
  stream.previousTime = sample.timeNs;
  stream.previousStack = sample.stack;
}

void fillSymbolTable(const std::map<uint64_t, SymbolInfo> &symbols, pb::SymbolTable &table) {
  std::unordered_map<std::string, uint32_t> indexOf;
  auto intern = [&](const std::string &s) {
    auto [it, added] = indexOf.try_emplace(s, static_cast<uint32_t>(table.strings_size()));
    if (added)
      table.add_strings(s);
    return it->second;
  };
  intern("");
  uint64_t previousPc = 0;
  for (const auto &[pc, info] : symbols) {
    pb::Symbol &symbol = *table.add_symbols();
    symbol.set_pc_delta(pc - previousPc);
    symbol.set_function(intern(info.function));
    symbol.set_start(info.start);
    symbol.set_size(info.size);
    symbol.set_file(intern(info.file));
    symbol.set_line(info.line);
    for (const std::string &name : info.inlined)
      symbol.add_inlined(intern(name));
    previousPc = pc;
  }
}

} // namespace

struct TraceWriter::Impl {
  std::string path;
  FILE *file = nullptr;
  Isa isa = Isa::X86_64;
  size_t registerCount = 0;
  bool headerWritten = false;
  bool ended = false;
  std::map<uint64_t, ThreadStream> streams;
  size_t modulesWritten = 0; // the capture's first ones (see writeNames)
  std::unordered_set<uint64_t> symbolsWritten;

  [[noreturn]] void fail(int error) const {
    throw TraceError("cannot write " + path + ": " + std::strerror(error));
  }

  // Writing out of order is a bug in the caller, not a file problem.
  void requireState(const char *what, bool needsHeader) const {
    const char *problem = !file ? " after close"
                          : headerWritten != needsHeader
                              ? (needsHeader ? " before writeHeader" : " twice")
                          : ended ? " after writeEnd"
                                  : nullptr;
    if (problem)
      throw std::logic_error(std::string("TraceWriter::") + what + problem);
  }

  void writeBytes(const void *bytes, size_t size) {
    if (std::fwrite(bytes, 1, size, file) != size)
      fail(errno);
  }

  void writeChunk(const pb::Chunk &chunk) {
    const std::string bytes = chunk.SerializeAsString();
    const uint32_t crc = crc32({reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()});
    const uint32_t length = static_cast<uint32_t>(bytes.size());
    uint8_t prefix[8];
    for (int i = 0; i < 4; ++i) {
      prefix[i] = static_cast<uint8_t>(length >> (8 * i));
      prefix[4 + i] = static_cast<uint8_t>(crc >> (8 * i));
    }
    writeBytes(prefix, sizeof prefix);
    writeBytes(bytes.data(), bytes.size());
  }

  void writeBatch(uint64_t tid, ThreadStream &stream) {
    if (stream.data.empty())
      return;
    const std::vector<uint8_t> registers = stream.registers->finish();
    pb::Chunk chunk;
    chunk.mutable_samples()->set_tid(tid);
    chunk.mutable_samples()->set_data(stream.data.data(), stream.data.size());
    chunk.mutable_samples()->set_registers(registers.data(), registers.size());
    writeChunk(chunk);
    stream.data.clear();
    stream.previousTime = 0;
    stream.previousStack.clear();
  }

  // A step trace as the streams it is held in (StepTrace.h), one chunk each.
  void writeStepTrace(const StepTrace &trace, uint32_t index) {
    uint64_t written = 0;
    auto writePart = [&](const std::vector<uint8_t> &stream, uint64_t records) {
      pb::Chunk chunk;
      pb::StepTraceChunk &part = *chunk.mutable_step_trace();
      part.set_index(index);
      part.set_tid(trace.tid());
      part.set_memory(trace.memoryRecorded());
      part.set_stream(stream.data(), stream.size());
      part.set_first_record(written);
      writeChunk(chunk);
      written += records;
    };
    for (const StepTrace::Chunk &chunk : trace.chunks())
      writePart(chunk.stream, chunk.records);
    if (trace.empty()) // an empty trace still takes its place
      writePart(DiffEncoder(layoutFor(isa, false), kStepOptions).finish(), 0);
  }

  void writePendingBatches() {
    for (auto &[tid, stream] : streams)
      writeBatch(tid, stream);
  }
};

TraceWriter::TraceWriter(const std::string &path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->file = std::fopen(path.c_str(), "wb");
  if (!impl_->file)
    throw TraceError("cannot create " + path + ": " + std::strerror(errno));
  impl_->writeBytes(kTraceMagic.data(), kTraceMagic.size());
  impl_->writeBytes(&kTraceFormatVersion, 1);
}

TraceWriter::~TraceWriter() {
  if (!impl_->file)
    return;
  try {
    flush();
  } catch (const TraceError &) {
    // Nothing to tell from a destructor; close() is the way to learn about failures.
  }
  std::fclose(impl_->file);
}

void TraceWriter::writeHeader(const CaptureHeader &header) {
  impl_->requireState("writeHeader", false);
  const RegisterTable &table = registerTable(header.isa);
  pb::Chunk chunk;
  pb::Header &h = *chunk.mutable_header();
  h.set_isa(std::string(table.name));
  h.set_pid(header.pid);
  h.set_program(header.program);
  h.set_debugger(header.debugger);
  h.set_period_ns(header.periodNs);
  h.set_stack_depth(header.stackDepth);
  h.set_start_unix_ns(header.startUnixNs);
  h.set_codec(std::string(kRegisterCodecName));
  h.set_codec_version(kDiffVersion);
  for (std::string_view name : table.regs)
    h.add_registers(std::string(name));
  for (const ExtRegister &reg : table.ext) {
    pb::ExtRegister &ext = *h.add_ext_registers();
    ext.set_name(std::string(reg.name));
    ext.set_bytes(reg.bytes);
  }
  impl_->writeChunk(chunk);
  impl_->isa = header.isa;
  impl_->registerCount = table.regs.size();
  impl_->headerWritten = true;
}

void TraceWriter::writeSamples(std::span<const Sample> samples) {
  impl_->requireState("writeSamples", true);
  for (const Sample &sample : samples) {
    // Checked before any byte is added, so a bad sample cannot leave a half-encoded batch.
    if (!sample.regs.empty() && sample.regs.size() != impl_->registerCount)
      throw std::invalid_argument("sample of thread " + std::to_string(sample.tid) + " has " +
                                  std::to_string(sample.regs.size()) + " registers, expected " +
                                  std::to_string(impl_->registerCount));
    ThreadStream &stream = impl_->streams[sample.tid];
    if (!stream.registers)
      stream.registers =
          std::make_unique<DiffEncoder>(layoutFor(impl_->isa, false), kSampleOptions);
    encodeSample(sample, stream);
    if (stream.size() >= kBatchBytes)
      impl_->writeBatch(sample.tid, stream);
  }
}

void TraceWriter::writeThreads(std::span<const ThreadInfo> threads) {
  impl_->requireState("writeThreads", true);
  pb::Chunk chunk;
  for (const ThreadInfo &info : threads) {
    pb::Thread &thread = *chunk.mutable_threads()->add_threads();
    thread.set_tid(info.tid);
    thread.set_name(info.name);
  }
  impl_->writeChunk(chunk);
}

void TraceWriter::writeNames(const Capture &capture) {
  impl_->requireState("writeNames", true);
  // Modules are only ever added to a capture, and symbols only for new pcs.
  if (impl_->modulesWritten < capture.modules.size()) {
    pb::Chunk modules;
    for (size_t i = impl_->modulesWritten; i < capture.modules.size(); ++i) {
      const ModuleInfo &info = capture.modules[i];
      pb::Module &module = *modules.mutable_modules()->add_modules();
      module.set_path(info.path);
      module.set_build_id(info.buildId);
      module.set_start(info.start);
      module.set_end(info.end);
      module.set_bias(info.bias);
    }
    impl_->writeChunk(modules);
    impl_->modulesWritten = capture.modules.size();
  }
  std::map<uint64_t, SymbolInfo> added;
  for (const auto &[pc, info] : capture.symbols)
    if (impl_->symbolsWritten.insert(pc).second)
      added.emplace(pc, info);
  if (!added.empty()) {
    pb::Chunk symbols;
    fillSymbolTable(added, *symbols.mutable_symbols());
    impl_->writeChunk(symbols);
  }
}

void TraceWriter::writeEnd(const Capture &capture) {
  impl_->requireState("writeEnd", true);
  impl_->writePendingBatches();
  writeNames(capture);

  pb::Chunk code;
  for (const auto &[start, bytes] : capture.code) {
    pb::Function &function = *code.mutable_code()->add_functions();
    function.set_start(start);
    function.set_code(bytes.data(), bytes.size());
  }
  impl_->writeChunk(code);

  pb::Chunk lines;
  fillSymbolTable(capture.instructionLines, *lines.mutable_instruction_lines());
  impl_->writeChunk(lines);

  for (size_t i = 0; i < capture.stepTraces.size(); ++i)
    impl_->writeStepTrace(capture.stepTraces[i], static_cast<uint32_t>(i));

  for (size_t first = 0; first < capture.allocEvents.size(); first += kAllocEventsPerChunk) {
    pb::Chunk chunk;
    size_t last = std::min(capture.allocEvents.size(), first + kAllocEventsPerChunk);
    for (size_t i = first; i < last; ++i) {
      const AllocEvent &e = capture.allocEvents[i];
      pb::AllocEvent &out = *chunk.mutable_alloc_events()->add_events();
      out.set_time_ns(e.timeNs);
      out.set_tid(e.tid);
      out.set_function(static_cast<uint32_t>(e.function));
      out.set_part(static_cast<uint32_t>(e.part));
      out.set_pointer(e.pointer);
      out.set_size(e.size);
      out.set_previous(e.previous);
      out.set_previous_size(e.previousSize);
      out.mutable_stack()->Add(e.stack.begin(), e.stack.end());
    }
    impl_->writeChunk(chunk);
  }

  if (capture.loop) {
    const LoopCaptureInfo &info = *capture.loop;
    pb::Chunk chunk;
    pb::LoopCapture &out = *chunk.mutable_loop();
    out.set_location(info.location);
    out.set_function_start(info.functionStart);
    out.set_head(info.head);
    out.set_whole_function(info.wholeFunction);
    out.set_tid(info.tid);
    out.set_split(static_cast<uint32_t>(info.split));
    out.set_expression(info.expression);
    out.set_count_t(info.countT);
    out.set_thread_cpu_ns(info.threadCpuNs);
    for (const MarkerHit &hit : info.markerHits) {
      out.add_marker_tids(hit.tid);
      out.add_marker_times_ns(hit.timeNs);
    }
    for (const auto &[index, value] : info.expressionValues)
      (*out.mutable_expression_values())[index] = value;
    impl_->writeChunk(chunk);
  }

  writeThreads(capture.threads);

  pb::Chunk end;
  end.mutable_end()->set_stops(capture.stops);
  end.mutable_end()->set_duration_ns(capture.durationNs);
  end.mutable_end()->set_end_reason(capture.endReason);
  end.mutable_end()->set_period_ns(capture.header.periodNs);
  impl_->writeChunk(end);
  impl_->ended = true;
  flush();
}

void TraceWriter::flush() {
  if (!impl_->file)
    return;
  impl_->writePendingBatches();
  if (std::fflush(impl_->file) != 0)
    impl_->fail(errno);
}

void TraceWriter::close() {
  if (!impl_->file)
    return;
  flush();
  FILE *file = impl_->file;
  impl_->file = nullptr;
  // EINVAL: the path is a pipe or device, which has nothing to sync.
  const bool synced = ::fsync(fileno(file)) == 0 || errno == EINVAL;
  const int syncError = errno;
  if (std::fclose(file) != 0)
    impl_->fail(errno);
  if (!synced)
    impl_->fail(syncError);
}

// Written beside its place and renamed into it, so that a failed save leaves an existing file
// alone. Errors name the file the user gave, then what failed.
void saveCapture(const std::string &path, const Capture &capture) {
  const std::string temporary = path + ".tmp";
  std::unique_ptr<TraceWriter> writer;
  try {
    writer = std::make_unique<TraceWriter>(temporary);
    writer->writeHeader(capture.header);
    writer->writeSamples(capture.samples);
    writer->writeEnd(capture);
    writer->close();
    if (std::rename(temporary.c_str(), path.c_str()) != 0)
      throw TraceError(std::strerror(errno));
  } catch (const std::exception &e) {
    if (writer) { // else nothing was created
      writer.reset();
      ::unlink(temporary.c_str());
    }
    throw TraceError("cannot save " + path + ": " + e.what());
  }
}

} // namespace strobe
