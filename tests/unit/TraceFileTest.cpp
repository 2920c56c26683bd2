#include "io/TraceFile.h"
#include "codec/Crc32.h"
#include "strobe.pb.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace strobe;
namespace fs = std::filesystem;

namespace {

auto fields(const CaptureHeader &h) {
  return std::tie(h.isa, h.pid, h.program, h.debugger, h.periodNs, h.stackDepth, h.startUnixNs);
}
auto fields(const Sample &s) {
  return std::tie(s.timeNs, s.tid, s.onCpu, s.inSyscall, s.stack, s.regs);
}
auto fields(const ThreadInfo &t) { return std::tie(t.tid, t.name); }
auto fields(const ModuleInfo &m) { return std::tie(m.path, m.buildId, m.start, m.end, m.bias); }
auto fields(const SymbolInfo &s) {
  return std::tie(s.function, s.start, s.size, s.file, s.line, s.inlined);
}
auto fields(const StepTrace &t) {
  return std::make_tuple(t.isa(), t.tid(), t.memoryRecorded(), t.records());
}

template <typename T>
void expectSameList(const std::vector<T> &expected, const std::vector<T> &got) {
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(fields(expected[i]), fields(got[i])) << "entry " << i;
}

void expectSameSymbols(const std::map<uint64_t, SymbolInfo> &expected,
                       const std::map<uint64_t, SymbolInfo> &got) {
  ASSERT_EQ(expected.size(), got.size());
  for (const auto &[pc, info] : expected) {
    auto it = got.find(pc);
    ASSERT_NE(it, got.end()) << std::hex << pc;
    EXPECT_EQ(fields(info), fields(it->second)) << std::hex << pc;
  }
}

void expectSameCapture(const Capture &expected, const Capture &got) {
  EXPECT_EQ(fields(expected.header), fields(got.header));
  expectSameList(expected.samples, got.samples);
  expectSameList(expected.threads, got.threads);
  expectSameList(expected.modules, got.modules);
  expectSameSymbols(expected.symbols, got.symbols);
  EXPECT_EQ(expected.code, got.code);
  expectSameSymbols(expected.instructionLines, got.instructionLines);
  expectSameList(expected.stepTraces, got.stepTraces);
  EXPECT_EQ(expected.stops, got.stops);
  EXPECT_EQ(expected.durationNs, got.durationNs);
  EXPECT_EQ(expected.endReason, got.endReason);
}

std::vector<uint64_t> counting(size_t count, uint64_t first) {
  std::vector<uint64_t> regs(count);
  for (size_t i = 0; i < count; ++i)
    regs[i] = first + i;
  return regs;
}

// `count` step records: a loop of loads through rbx / x1 (real instructions, so the memory
// operand model predicts them), extended state on the first half only, one gap.
std::vector<TraceRecord> stepRecords(Isa isa, bool memory, size_t count) {
  const RegisterTable &table = registerTable(isa);
  const bool x86 = isa == Isa::X86_64;
  // mov rax, [rbx + 8] / ldr x0, [x1, #8]
  const std::vector<uint8_t> load = x86 ? std::vector<uint8_t>{0x48, 0x8b, 0x43, 0x08}
                                        : std::vector<uint8_t>{0x20, 0x04, 0x40, 0xf9};
  constexpr unsigned base = 1; // rbx / x1
  std::vector<TraceRecord> records;
  TraceRecord r;
  r.regs = counting(table.regs.size(), 0x7000);
  r.regs[table.pc] = 0x401000;
  r.ext = counting(table.extSlots(), 0xabc0);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) {
      const uint64_t address = r.regs[base] + 8;
      r.instruction = load;
      r.regs[0] = 0x1111 * i;
      if (memory)
        r.memory = {{address, 8, true, false, {}, {}}};
      for (MemoryAccess &a : r.memory)
        for (int k = 0; k < 8; ++k)
          a.readValue.push_back(static_cast<uint8_t>(r.regs[0] >> (8 * k)));
      r.regs[base] += 16;
      r.regs[table.pc] = i % 5 == 4 ? 0x401000 : r.regs[table.pc] + 4;
    }
    if (i == count / 2)
      r.ext.clear();
    r.gap = i == 7;
    records.push_back(r);
  }
  return records;
}

StepTrace stepTrace(Isa isa, uint64_t tid, bool memory, size_t count) {
  return StepTrace(isa, tid, memory, stepRecords(isa, memory, count));
}

// Three threads with ties in time, empty and deep stacks, a sample without registers, extreme
// register values and a stack that moves down; every table filled.
Capture handBuiltCapture(Isa isa) {
  const size_t n = registerTable(isa).regs.size();
  std::vector<uint64_t> changed = counting(n, 0x1000);
  changed[2] = 0xffff800000000000;
  const std::vector<uint64_t> allOnes(n, ~uint64_t{0});

  Capture c;
  c.header = {isa, 4242, "/usr/bin/demo", "lldb", 1'000'000, 3, 1'700'000'000'123'456'789};
  c.samples = {
      {0, 100, true, false, {0x401000, 0x401500, 0x7f0000001234}, counting(n, 0x1000)},
      {0, 200, false, true, {0x401010}, allOnes},
      {1000, 100, true, false, {0x401004, 0x401500, 0x7f0000001234}, changed},
      {1000, 300, true, false, {}, {}},
      {2500, 200, false, true, {0x401010}, allOnes},
      {2500, 300, false, false, {0x401010, 0x401504}, counting(n, 0)},
      {4000, 100, true, true, {0x400ff0, 0x401500}, counting(n, 7)},
  };
  c.threads = {{100, "main"}, {200, "worker-1"}, {300, ""}};
  c.modules = {{"/usr/bin/demo", "deadbeef01", 0x400000, 0x402000, 0},
               {"/lib/libc.so.6", "", 0x7f0000000000, 0x7f0000200000, 0x7f0000000000}};
  c.symbols = {
      {0x400ff0, {"helper", 0x400fe0, 0x20, "demo.c", 5, {}}},
      {0x401000, {"main", 0x401000, 0x40, "demo.c", 12, {}}},
      {0x401004, {"main", 0x401000, 0x40, "demo.c", 13, {"inlined_helper", "inner"}}},
      {0x401010, {"spin", 0x401010, 0x20, "spin.h", 30, {}}},
      {0x401500, {}},
      {0x401504, {"", 0, 0, "", 0, {}}},
      {0x7f0000001234, {"__libc_start_call_main", 0x7f0000001200, 0x80, "", 0, {}}},
  };
  c.code = {{0x401000, {0x55, 0x48, 0x89, 0xe5, 0xc3}}, {0x401010, {0xeb, 0xfe}}};
  c.instructionLines = {{0x401000, {"main", 0x401000, 0x40, "demo.c", 12, {}}},
                        {0x401001, {"main", 0x401000, 0x40, "demo.c", 12, {}}},
                        {0x401004, {"main", 0x401000, 0x40, "demo.c", 13, {"inlined_helper"}}}};
  c.stepTraces = {stepTrace(isa, 100, true, 40), stepTrace(isa, 200, false, 3),
                  stepTrace(isa, 100, false, 0)};
  c.stops = 4;
  c.durationNs = 4'100'000;
  c.endReason = "the process exited with code 0";
  return c;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

uint32_t le32(const std::string &s, size_t at) {
  return uint32_t{static_cast<uint8_t>(s[at])} | uint32_t{static_cast<uint8_t>(s[at + 1])} << 8 |
         uint32_t{static_cast<uint8_t>(s[at + 2])} << 16 |
         uint32_t{static_cast<uint8_t>(s[at + 3])} << 24;
}

// Offsets where chunks start, walking the length prefixes; the last entry is the file size.
std::vector<size_t> chunkStarts(const std::string &file) {
  std::vector<size_t> starts;
  for (size_t at = 8; at < file.size(); at += 8 + le32(file, at))
    starts.push_back(at);
  starts.push_back(file.size());
  return starts;
}

// A chunk framed by hand from the spec in strobe.proto, for files the writer would not produce.
std::string frame(const std::string &body) {
  const uint32_t crc = crc32({reinterpret_cast<const uint8_t *>(body.data()), body.size()});
  std::string out;
  for (uint32_t word : {static_cast<uint32_t>(body.size()), crc})
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<char>(word >> (8 * i)));
  return out + body;
}

std::string le32Bytes(uint32_t value) {
  std::string out;
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
  return out;
}

std::string frame(const pb::Chunk &chunk) { return frame(chunk.SerializeAsString()); }

const std::string kMagic("STROBE\0\x01", 8);

pb::Chunk diffHeader(std::vector<std::string> registers) {
  pb::Chunk chunk;
  pb::Header &h = *chunk.mutable_header();
  h.set_isa("x86_64");
  h.set_codec("diff");
  h.set_codec_version(1);
  for (const std::string &name : registers)
    h.add_registers(name);
  return chunk;
}

class TraceFile : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "strobe-trace-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

} // namespace

// The loaded step traces against the records handBuiltCapture made them of, not as the expected
// capture's traces hold them (through the same codec).
void expectHandBuiltStepRecords(Isa isa, const Capture &loaded) {
  ASSERT_EQ(loaded.stepTraces.size(), 3u);
  EXPECT_TRUE(loaded.stepTraces[0].records() == stepRecords(isa, true, 40));
  EXPECT_TRUE(loaded.stepTraces[1].records() == stepRecords(isa, false, 3));
  EXPECT_TRUE(loaded.stepTraces[2].empty());
}

TEST_F(TraceFile, RoundTripsEveryFieldOnX86_64) {
  const Capture capture = handBuiltCapture(Isa::X86_64);
  saveCapture(path("x.strobe"), capture);
  const LoadedTrace loaded = loadCapture(path("x.strobe"));
  EXPECT_EQ(loaded.warnings, std::vector<std::string>{});
  expectSameCapture(capture, loaded.capture);
  expectHandBuiltStepRecords(Isa::X86_64, loaded.capture);
}

TEST_F(TraceFile, RoundTripsEveryFieldOnAArch64) {
  const Capture capture = handBuiltCapture(Isa::AArch64);
  saveCapture(path("a.strobe"), capture);
  const LoadedTrace loaded = loadCapture(path("a.strobe"));
  EXPECT_EQ(loaded.warnings, std::vector<std::string>{});
  expectSameCapture(capture, loaded.capture);
  expectHandBuiltStepRecords(Isa::AArch64, loaded.capture);
}

TEST_F(TraceFile, FileStartsWithMagicAndVersion) {
  saveCapture(path("m.strobe"), handBuiltCapture(Isa::X86_64));
  EXPECT_EQ(readFile(path("m.strobe")).substr(0, 8), kMagic);
  EXPECT_FALSE(fs::exists(path("m.strobe.tmp")));
}

TEST_F(TraceFile, LongCaptureSpansManyBatchesPerThread) {
  Capture capture;
  capture.header.isa = Isa::AArch64;
  for (uint64_t i = 0; i < 60000; ++i) {
    const uint64_t tid = 10 + i % 3;
    capture.samples.push_back({i * 997,
                               tid,
                               i % 5 != 0,
                               i % 7 == 0,
                               {0x400000 + (i * 40503) % 4096, 0x400800},
                               counting(34, i / 3)});
  }
  capture.endReason = "stopped";
  saveCapture(path("long.strobe"), capture);
  const std::string file = readFile(path("long.strobe"));
  EXPECT_GT(chunkStarts(file).size(), 12u); // header, several batches per thread, 6 closing chunks
  const LoadedTrace loaded = loadCapture(path("long.strobe"));
  EXPECT_EQ(loaded.warnings, std::vector<std::string>{});
  expectSameCapture(capture, loaded.capture);
}

TEST_F(TraceFile, LongStepTraceSpansSeveralChunks) {
  Capture capture;
  std::vector<TraceRecord> records = stepRecords(Isa::X86_64, true, 70000);
  for (TraceRecord &r : records)
    r.ext = counting(registerTable(Isa::X86_64).extSlots(), 0xabc0);
  capture.stepTraces.emplace_back(Isa::X86_64, 5, true, records);
  saveCapture(path("steps.strobe"), capture);
  const std::string file = readFile(path("steps.strobe"));
  // header, code, lines, 8 x 8192 + 4464 records, threads, end (no modules or symbols to write)
  EXPECT_EQ(chunkStarts(file).size() - 1, 14u);
  const LoadedTrace loaded = loadCapture(path("steps.strobe"));
  EXPECT_EQ(loaded.warnings, std::vector<std::string>{});
  expectSameCapture(capture, loaded.capture);
  ASSERT_EQ(loaded.capture.stepTraces.size(), 1u);
  EXPECT_TRUE(loaded.capture.stepTraces[0].records() == records);
  // Diff records keep a steady load loop small: well under 4 bytes per instruction.
  EXPECT_LT(file.size(), 70000u * 4);
}

// A damaged chunk of a step trace costs its 8192 records; the records after it load, the first
// of them marked as following a gap.
TEST_F(TraceFile, ADamagedStepChunkCostsOnlyItsRecords) {
  Capture capture;
  std::vector<TraceRecord> all = stepRecords(Isa::X86_64, true, 20000);
  for (TraceRecord &r : all) { // one run, every record alike in shape
    r.ext = counting(registerTable(Isa::X86_64).extSlots(), 0xabc0);
    r.gap = false;
  }
  capture.stepTraces.emplace_back(Isa::X86_64, 5, true, all);
  saveCapture(path("steps.strobe"), capture);
  const std::string file = readFile(path("steps.strobe"));
  const std::vector<size_t> starts = chunkStarts(file); // and the end of the file
  std::vector<size_t> stepChunks;                       // indices into starts
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    pb::Chunk chunk;
    ASSERT_TRUE(chunk.ParseFromString(file.substr(starts[i] + 8, le32(file, starts[i]))));
    if (chunk.has_step_trace())
      stepChunks.push_back(i);
  }
  ASSERT_EQ(stepChunks.size(), 3u); // 8192 + 8192 + 3616 records
  for (const size_t lost : {0, 1}) {
    SCOPED_TRACE("step chunk " + std::to_string(lost) + " damaged");
    const size_t chunk = stepChunks[lost];
    std::string damaged = file;
    const size_t at = (starts[chunk] + starts[chunk + 1]) / 2;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
    writeFile(path("damaged.strobe"), damaged);
    const LoadedTrace loaded = loadCapture(path("damaged.strobe"));
    EXPECT_EQ(loaded.warnings,
              std::vector<std::string>{
                  path("damaged.strobe") + ": corrupt chunk " + std::to_string(chunk) +
                  " at byte " + std::to_string(starts[chunk]) + " (CRC mismatch); skipped it"});
    ASSERT_EQ(loaded.capture.stepTraces.size(), 1u);
    std::vector<TraceRecord> expected(all.begin(), all.begin() + lost * 8192);
    expected.insert(expected.end(), all.begin() + (lost + 1) * 8192, all.end());
    expected[lost * 8192].gap = true; // even the first record: what came before it is lost
    EXPECT_TRUE(loaded.capture.stepTraces[0].records() == expected);
    // The records after the gap keep their numbers from the file.
    EXPECT_EQ(loaded.capture.stepTraces[0].numberAt(lost * 8192), (lost + 1) * 8192);
    EXPECT_EQ(loaded.capture.stepTraces[0].numberAt(lost * 8192 + 5), (lost + 1) * 8192 + 5);
    if (lost == 1) {
      EXPECT_EQ(loaded.capture.stepTraces[0].numberAt(8191), 8191u);
    }
  }
}

// A file cut inside a step trace's third chunk keeps the two before it, and says so.
TEST_F(TraceFile, ATruncatedStepTraceCountsTheRecordsKept) {
  Capture capture;
  capture.stepTraces.emplace_back(Isa::X86_64, 5, true, stepRecords(Isa::X86_64, true, 20000));
  saveCapture(path("steps.strobe"), capture);
  const std::string file = readFile(path("steps.strobe"));
  const std::vector<size_t> starts = chunkStarts(file);
  size_t third = 0;           // the third step chunk's start
  uint64_t recordsBefore = 0; // in the two before it, as the file says
  for (size_t i = 0, seen = 0; i + 1 < starts.size() && seen < 3; ++i) {
    pb::Chunk chunk;
    ASSERT_TRUE(chunk.ParseFromString(file.substr(starts[i] + 8, le32(file, starts[i]))));
    if (chunk.has_step_trace() && ++seen == 3) {
      third = starts[i];
      recordsBefore = chunk.step_trace().first_record();
    }
  }
  ASSERT_NE(third, 0u);
  ASSERT_GT(recordsBefore, 0u);
  const std::string cut = path("cut.strobe");
  writeFile(cut, file.substr(0, third + 20));
  const LoadedTrace loaded = loadCapture(cut);
  ASSERT_FALSE(loaded.warnings.empty());
  EXPECT_EQ(loaded.warnings[0], cut + ": truncated after " + std::to_string(third + 20) +
                                    " bytes (chunk 5); kept the " + std::to_string(recordsBefore) +
                                    " step records before it");
  ASSERT_EQ(loaded.capture.stepTraces.size(), 1u);
  EXPECT_EQ(loaded.capture.stepTraces[0].size(), recordsBefore);
}

TEST_F(TraceFile, StepTraceChunksMustComeInOrder) {
  pb::Chunk part;
  part.mutable_step_trace()->set_index(1);
  writeFile(path("order"), kMagic + frame(diffHeader({})) + frame(part));
  const LoadedTrace loaded = loadCapture(path("order"));
  ASSERT_EQ(loaded.warnings.size(), 2u);
  EXPECT_EQ(loaded.warnings[0], path("order") + ": corrupt chunk 1 at byte " +
                                    std::to_string(8 + frame(diffHeader({})).size()) +
                                    " (step trace 1 before trace 0); skipped it");
}

// A file whose extended-register table differs from this strobe's keeps its step records
// without their extended state.
TEST_F(TraceFile, ForeignExtendedRegistersAreDropped) {
  Capture capture;
  capture.stepTraces = {stepTrace(Isa::X86_64, 5, false, 4)};
  saveCapture(path("ext.strobe"), capture);
  std::string file = readFile(path("ext.strobe"));
  const std::vector<size_t> starts = chunkStarts(file);
  pb::Chunk header;
  ASSERT_TRUE(header.ParseFromString(file.substr(starts[0] + 8, starts[1] - starts[0] - 8)));
  header.mutable_header()->mutable_ext_registers(0)->set_name("ymm0");
  file = kMagic + frame(header) + file.substr(starts[1]);
  writeFile(path("ext.strobe"), file);

  const LoadedTrace loaded = loadCapture(path("ext.strobe"));
  EXPECT_EQ(loaded.warnings,
            std::vector<std::string>{path("ext.strobe") +
                                     ": the step traces' extended registers "
                                     "differ from this strobe's and were dropped"});
  ASSERT_EQ(loaded.capture.stepTraces.size(), 1u);
  std::vector<TraceRecord> withoutExt = stepRecords(Isa::X86_64, false, 4);
  for (TraceRecord &r : withoutExt)
    r.ext.clear();
  expectSameList({StepTrace(Isa::X86_64, 5, false, withoutExt)}, loaded.capture.stepTraces);
}

TEST_F(TraceFile, SamplesAtTheSameTimeComeBackOrderedByThread) {
  Capture capture;
  capture.samples = {{5, 3, true, false, {0x10}, {}},
                     {5, 1, true, false, {0x20}, {}},
                     {9, 2, true, false, {0x30}, {}},
                     {9, 1, true, false, {0x40}, {}}};
  saveCapture(path("tie.strobe"), capture);
  const Capture loaded = loadCapture(path("tie.strobe")).capture;
  ASSERT_EQ(loaded.samples.size(), 4u);
  EXPECT_EQ(loaded.samples[0].stack, std::vector<uint64_t>{0x20});
  EXPECT_EQ(loaded.samples[1].stack, std::vector<uint64_t>{0x10});
  EXPECT_EQ(loaded.samples[2].stack, std::vector<uint64_t>{0x40});
  EXPECT_EQ(loaded.samples[3].stack, std::vector<uint64_t>{0x30});
}

// A capture streamed in pieces: samples arrive in several calls with flushes in between, threads
// are named twice (the later name wins).
TEST_F(TraceFile, StreamingWriterRoundTrips) {
  const Capture capture = handBuiltCapture(Isa::X86_64);
  {
    TraceWriter writer(path("s.strobe"));
    writer.writeHeader(capture.header);
    writer.writeSamples(std::span(capture.samples).first(3));
    writer.flush();
    writer.writeThreads(std::vector<ThreadInfo>{{100, "starting"}, {300, "early"}});
    writer.writeSamples(std::span(capture.samples).subspan(3));
    writer.writeEnd(capture);
    writer.close();
  }
  const LoadedTrace loaded = loadCapture(path("s.strobe"));
  EXPECT_EQ(loaded.warnings, std::vector<std::string>{});
  Capture expected = capture;
  expected.threads = {{100, "main"}, {300, ""}, {200, "worker-1"}};
  expectSameCapture(expected, loaded.capture);
}

// The debugger killed during a streamed capture: the file holds what the last checkpoint wrote,
// and its samples keep the names of the modules and symbols known then.
TEST_F(TraceFile, AStreamCutAfterACheckpointStillNamesItsSamples) {
  const Capture capture = handBuiltCapture(Isa::X86_64);
  Capture soFar = capture; // what the capture had learned at the first checkpoint
  soFar.modules.resize(1);
  soFar.symbols.erase(soFar.symbols.find(0x401010), soFar.symbols.end());
  std::string atCheckpoint;
  {
    TraceWriter writer(path("s.strobe"));
    writer.writeHeader(capture.header);
    writer.writeSamples(std::span(capture.samples).first(3));
    writer.writeNames(soFar);
    writer.flush();
    atCheckpoint = readFile(path("s.strobe"));
    writer.writeSamples(std::span(capture.samples).subspan(3));
    writer.writeNames(capture);
    writer.writeEnd(capture);
    writer.close();
  }
  writeFile(path("cut.strobe"), atCheckpoint);
  const LoadedTrace cut = loadCapture(path("cut.strobe"));
  EXPECT_EQ(cut.capture.samples.size(), 3u);
  expectSameList(soFar.modules, cut.capture.modules);
  EXPECT_EQ(cut.capture.symbols.size(), 3u);
  EXPECT_EQ(cut.capture.symbols.at(0x401004).function, "main");

  const LoadedTrace whole = loadCapture(path("s.strobe"));
  EXPECT_EQ(whole.warnings, std::vector<std::string>{});
  expectSameCapture(capture, whole.capture); // nothing learned twice is held twice
}

TEST_F(TraceFile, TheEndCarriesThePeriodTheSamplesReached) {
  Capture capture = handBuiltCapture(Isa::X86_64);
  capture.header.periodNs = 1'000'000; // asked for, and streamed before the first sample
  {
    TraceWriter writer(path("slow.strobe"));
    writer.writeHeader(capture.header);
    writer.writeSamples(capture.samples);
    capture.header.periodNs = 4'500'000; // slow stops lowered the rate
    writer.writeEnd(capture);
    writer.close();
  }
  EXPECT_EQ(loadCapture(path("slow.strobe")).capture.header.periodNs, 4'500'000u);
}

TEST_F(TraceFile, WriterEnforcesChunkOrder) {
  TraceWriter writer(path("o.strobe"));
  const std::vector<Sample> samples = {{0, 1, true, false, {0x10}, {}}};
  EXPECT_THROW(writer.writeSamples(samples), std::logic_error);
  writer.writeHeader({});
  EXPECT_THROW(writer.writeHeader({}), std::logic_error);
  const std::vector<Sample> wrongRegisters = {{0, 1, true, false, {0x10}, {1, 2, 3}}};
  EXPECT_THROW(writer.writeSamples(wrongRegisters), std::invalid_argument);
  writer.writeEnd({});
  EXPECT_THROW(writer.writeSamples(samples), std::logic_error);
  writer.close();
  EXPECT_THROW(writer.writeThreads({}), std::logic_error);
  writer.flush(); // harmless once closed
}

// The file for the damage tests: chunk 0 header, 1 thread 100 (3 samples), 2 thread 200 (2), 3
// thread 100 (2 more), then modules, symbols, code, instruction lines, threads and End (4-9).
class DamagedTrace : public TraceFile {
protected:
  void SetUp() override {
    TraceFile::SetUp();
    capture_ = handBuiltCapture(Isa::X86_64);
    capture_.stepTraces.clear();
    capture_.samples = {
        {10, 100, true, false, {0x401000}, counting(21, 1)},
        {20, 100, true, false, {0x401004}, counting(21, 2)},
        {30, 100, true, false, {0x401000}, counting(21, 2)},
        {15, 200, false, true, {0x401010, 0x401500}, {}},
        {25, 200, false, true, {0x401010, 0x401500}, counting(21, 9)},
        {40, 100, true, false, {0x401004}, counting(21, 3)},
        {50, 100, true, false, {}, counting(21, 3)},
    };
    TraceWriter writer(path("d.strobe"));
    writer.writeHeader(capture_.header);
    writer.writeSamples(std::span(capture_.samples).first(3));
    writer.flush();
    writer.writeSamples(std::span(capture_.samples).subspan(3, 2));
    writer.flush();
    writer.writeSamples(std::span(capture_.samples).subspan(5));
    writer.writeEnd(capture_);
    writer.close();
    file_ = readFile(path("d.strobe"));
    starts_ = chunkStarts(file_);
    ASSERT_EQ(starts_.size(), 11u);
  }

  std::vector<Sample> samplesOf(uint64_t tid) const {
    std::vector<Sample> out;
    for (const Sample &s : capture_.samples)
      if (s.tid == tid)
        out.push_back(s);
    return out;
  }

  static constexpr size_t kSamplesBeforeChunk[] = {0, 0, 3, 5, 7, 7, 7, 7, 7, 7};

  Capture capture_;
  std::string file_;
  std::vector<size_t> starts_;
};

TEST_F(DamagedTrace, EveryTruncationLoadsAPrefixOrFailsCleanly) {
  const std::string cut = path("cut.strobe");
  const size_t headerEnd = starts_[1];
  for (size_t size = 0; size < file_.size(); ++size) {
    SCOPED_TRACE("truncated to " + std::to_string(size) + " bytes");
    writeFile(cut, file_.substr(0, size));
    if (size < 8) {
      try {
        loadCapture(cut);
        ADD_FAILURE() << "loaded a file without its magic";
      } catch (const TraceError &e) {
        EXPECT_EQ(std::string(e.what()), cut + " is not a strobe trace file");
      }
      continue;
    }
    if (size < headerEnd) {
      try {
        loadCapture(cut);
        ADD_FAILURE() << "loaded a file without its header";
      } catch (const TraceError &e) {
        EXPECT_EQ(std::string(e.what()), cut + ": truncated after " + std::to_string(size) +
                                             " bytes (chunk 0); no header to load");
      }
      continue;
    }
    const LoadedTrace loaded = loadCapture(cut);
    const size_t chunk =
        std::upper_bound(starts_.begin(), starts_.end(), size) - starts_.begin() - 1;
    EXPECT_EQ(loaded.capture.samples.size(), kSamplesBeforeChunk[chunk]);
    std::vector<std::string> expected;
    if (size != starts_[chunk])
      expected.push_back(cut + ": truncated after " + std::to_string(size) + " bytes (chunk " +
                         std::to_string(chunk) + "); kept the " +
                         std::to_string(kSamplesBeforeChunk[chunk]) + " samples before it");
    expected.push_back(cut + ": the capture did not finish (no end chunk); modules and symbols "
                             "may be missing");
    EXPECT_EQ(loaded.warnings, expected);
    for (uint64_t tid : {100, 200}) {
      std::vector<Sample> got;
      for (const Sample &s : loaded.capture.samples)
        if (s.tid == tid)
          got.push_back(s);
      const std::vector<Sample> all = samplesOf(tid);
      ASSERT_LE(got.size(), all.size());
      expectSameList(std::vector<Sample>(all.begin(), all.begin() + got.size()), got);
    }
  }
}

TEST_F(DamagedTrace, TruncationKeepsWholeBatchesBeforeIt) {
  const std::string cut = path("cut.strobe");
  writeFile(cut, file_.substr(0, starts_[3] + 5)); // inside thread 100's second batch
  const LoadedTrace loaded = loadCapture(cut);
  ASSERT_EQ(loaded.capture.samples.size(), 5u);
  EXPECT_EQ(loaded.capture.samples[0].timeNs, 10u);
  EXPECT_EQ(loaded.capture.samples[1].timeNs, 15u);
  EXPECT_EQ(loaded.capture.samples[4].timeNs, 30u);
  EXPECT_EQ(loaded.capture.samples[4].tid, 100u);
  EXPECT_EQ(loaded.capture.header.pid, 4242);
  EXPECT_TRUE(loaded.capture.symbols.empty());
}

// Everything but the damaged chunk loads: the samples of the other batches, and the modules,
// symbols and End written after it.
TEST_F(DamagedTrace, AFlippedByteCostsOnlyItsChunk) {
  std::string damaged = file_;
  const size_t middle = (starts_[2] + 8 + starts_[3]) / 2; // inside thread 200's batch
  damaged[middle] = static_cast<char>(damaged[middle] ^ 0x40);
  writeFile(path("flip.strobe"), damaged);
  const LoadedTrace loaded = loadCapture(path("flip.strobe"));
  EXPECT_EQ(loaded.warnings,
            std::vector<std::string>{path("flip.strobe") + ": corrupt chunk 2 at byte " +
                                     std::to_string(starts_[2]) + " (CRC mismatch); skipped it"});
  Capture expected = capture_;
  std::erase_if(expected.samples, [](const Sample &s) { return s.tid == 200; });
  std::stable_sort(expected.samples.begin(), expected.samples.end(),
                   [](const Sample &a, const Sample &b) { return a.timeNs < b.timeNs; });
  expectSameCapture(expected, loaded.capture);
}

// A damaged length sends the reader looking for the next offset that holds a whole chunk.
TEST_F(DamagedTrace, AFlippedLengthIsSkippedToTheNextWholeChunk) {
  std::string damaged = file_;
  damaged[starts_[1] + 1] = static_cast<char>(damaged[starts_[1] + 1] ^ 0x01); // +256 bytes
  writeFile(path("length.strobe"), damaged);
  const LoadedTrace loaded = loadCapture(path("length.strobe"));
  EXPECT_EQ(loaded.warnings,
            std::vector<std::string>{
                path("length.strobe") + ": corrupt chunk 1 at byte " + std::to_string(starts_[1]) +
                " (CRC mismatch); skipped " + std::to_string(starts_[2] - starts_[1]) +
                " bytes to the next whole chunk, at byte " + std::to_string(starts_[2])});
  EXPECT_EQ(loaded.capture.samples.size(), 4u); // threads 200 and 100's later batch
  EXPECT_TRUE(std::ranges::none_of(loaded.capture.samples,
                                   [](const Sample &s) { return s.tid == 100 && s.timeNs < 40; }));
  EXPECT_FALSE(loaded.capture.symbols.empty());
}

// A length that reaches past the end is damage, not a cut, when a whole chunk follows.
TEST_F(DamagedTrace, ALengthPastTheEndIsSkippedWhenWholeChunksFollow) {
  std::string damaged = file_;
  damaged[starts_[2] + 3] = static_cast<char>(damaged[starts_[2] + 3] ^ 0x10);
  writeFile(path("far.strobe"), damaged);
  const LoadedTrace loaded = loadCapture(path("far.strobe"));
  EXPECT_EQ(loaded.warnings,
            std::vector<std::string>{
                path("far.strobe") + ": corrupt chunk 2 at byte " + std::to_string(starts_[2]) +
                " (its length reaches past the end); skipped " +
                std::to_string(starts_[3] - starts_[2]) +
                " bytes to the next whole chunk, at byte " + std::to_string(starts_[3])});
  EXPECT_EQ(loaded.capture.samples.size(), 5u); // all but thread 200's
  EXPECT_FALSE(loaded.capture.symbols.empty());
}

TEST_F(DamagedTrace, GarbageToTheEndKeepsWhatCameBefore) {
  std::string damaged = file_.substr(0, starts_[3]) + le32Bytes(100); // a length that fits
  for (size_t i = 0; i < 4000; ++i)
    damaged.push_back(static_cast<char>(i * 37 % 251));
  writeFile(path("tail.strobe"), damaged);
  const LoadedTrace loaded = loadCapture(path("tail.strobe"));
  ASSERT_EQ(loaded.warnings.size(), 2u);
  EXPECT_EQ(loaded.warnings[0], path("tail.strobe") + ": corrupt chunk 3 at byte " +
                                    std::to_string(starts_[3]) +
                                    " (CRC mismatch); nothing after it is readable");
  EXPECT_EQ(loaded.capture.samples.size(), 5u);
}

TEST_F(TraceFile, NonTraceFilesAreRejected) {
  writeFile(path("text"), "just some text, long enough to hold a magic\n");
  writeFile(path("empty"), "");
  for (const char *name : {"text", "empty"}) {
    try {
      loadCapture(path(name));
      ADD_FAILURE() << name << " loaded";
    } catch (const TraceError &e) {
      EXPECT_EQ(std::string(e.what()), path(name) + " is not a strobe trace file");
    }
  }
}

TEST_F(TraceFile, MissingFileAndDirectoryAreReported) {
  try {
    loadCapture(path("nope.strobe"));
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot open " + path("nope.strobe") + ": No such file or directory");
  }
  try {
    loadCapture(dir_.string());
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()), "cannot read " + dir_.string() + ": Is a directory");
  }
}

TEST_F(TraceFile, NewerFormatVersionIsRejected) {
  writeFile(path("v2"), std::string("STROBE\0\x02", 8));
  try {
    loadCapture(path("v2"));
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()),
              path("v2") + " is a strobe trace of format version 2; this strobe reads version 1");
  }
}

TEST_F(TraceFile, UnknownCodecIsRejected) {
  pb::Chunk header = diffHeader({"rip"});
  header.mutable_header()->set_codec("diff");
  header.mutable_header()->set_codec_version(kDiffVersion + 1);
  writeFile(path("codec"), kMagic + frame(header));
  try {
    loadCapture(path("codec"));
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()), path("codec") + " uses register codec 'diff' version " +
                                         std::to_string(kDiffVersion + 1) +
                                         ", which this strobe cannot read");
  }
}

TEST_F(TraceFile, FirstChunkMustBeAHeader) {
  pb::Chunk end;
  end.mutable_end()->set_stops(1);
  writeFile(path("headless"), kMagic + frame(end));
  try {
    loadCapture(path("headless"));
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()), path("headless") +
                                         ": corrupt chunk 0 at byte 8 (the first chunk is not a "
                                         "header); no header to load");
  }
}

uint32_t crcOf(const std::string &bytes) {
  return crc32({reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()});
}

// Sample bytes written by hand from the layouts in strobe.proto and DiffFormat.h, under a register
// table that differs from this strobe's: registers are placed by name, unknown ones dropped.
TEST_F(TraceFile, RegistersArePlacedByNameWhenTheTableDiffers) {
  pb::Chunk batch;
  batch.mutable_samples()->set_tid(77);
  // time +100 (zigzag 200), onCpu | hasRegisters | 1 stack entry, pc 0x40 (zigzag 0x80); then
  // time +1, inSyscall | hasRegisters | no stack.
  batch.mutable_samples()->set_data(std::string("\xc8\x01\x0d\x80\x01"
                                                "\x02\x06",
                                                7));
  // A diff stream of 2 registers, pc first: interval 16, 2 history bits, no memory model.
  const std::string header("SDIF\x01\x01\x02\x00\x00\x10\x02\x00", 12);
  // Keyframe rip = 0x40, bogus = 7, no instruction, no memory; then pc delta +1 (zigzag 2),
  // nothing else changed.
  const std::string payload("\x40\x07\x00\x00"
                            "\x03\x02",
                            6);
  const std::string fields("\x00\x02\x06", 3); // flags, records, stored size
  batch.mutable_samples()->set_registers(header + le32Bytes(crcOf(header)) + "\x9e\x51\xd1\xf5" +
                                         fields + le32Bytes(crcOf(fields + payload)) + payload);
  const std::string unknownKind("\xa0\x06\x01", 3); // field 100: a chunk kind from a newer strobe
  pb::Chunk end;
  end.mutable_end();
  writeFile(path("named"), kMagic + frame(diffHeader({"rip", "bogus"})) + frame(batch) +
                               frame(unknownKind) + frame(end));

  const LoadedTrace loaded = loadCapture(path("named"));
  EXPECT_EQ(loaded.warnings,
            std::vector<std::string>{path("named") +
                                     ": registers not in this strobe's x86_64 table were "
                                     "dropped: bogus"});
  ASSERT_EQ(loaded.capture.samples.size(), 2u);
  std::vector<uint64_t> regs(21, 0);
  regs[16] = 0x40;
  expectSameList(std::vector<Sample>{{100, 77, true, false, {0x40}, regs}},
                 std::vector<Sample>{loaded.capture.samples[0]});
  regs[16] = 0x41;
  expectSameList(std::vector<Sample>{{101, 77, false, true, {}, regs}},
                 std::vector<Sample>{loaded.capture.samples[1]});
}

TEST_F(TraceFile, BadSampleBytesAreACorruptChunk) {
  pb::Chunk batch;
  batch.mutable_samples()->set_tid(1);
  batch.mutable_samples()->set_data(std::string("\x02\x1b\x80", 3)); // 3 stack entries, 1 byte
  writeFile(path("bad"), kMagic + frame(diffHeader({})) + frame(batch));
  const LoadedTrace loaded = loadCapture(path("bad"));
  ASSERT_EQ(loaded.warnings.size(), 2u);
  EXPECT_EQ(loaded.warnings[0], path("bad") + ": corrupt chunk 1 at byte " +
                                    std::to_string(8 + frame(diffHeader({})).size()) +
                                    " (bad sample data); skipped it");
  EXPECT_TRUE(loaded.capture.samples.empty());
}

// Garbage behind a valid CRC reaches the sample decoder; it must fail the chunk, never crash.
TEST_F(TraceFile, RandomSampleBytesNeverCrash) {
  std::mt19937 random(7);
  std::vector<std::string> registers;
  for (const std::string_view name : registerTable(Isa::X86_64).regs)
    registers.emplace_back(name);
  const std::string header = frame(diffHeader(registers));
  for (int i = 0; i < 1000; ++i) {
    std::string data(random() % 64, '\0');
    for (char &c : data)
      c = static_cast<char>(random());
    pb::Chunk batch;
    batch.mutable_samples()->set_tid(1);
    batch.mutable_samples()->set_data(data.substr(0, data.size() / 2));
    batch.mutable_samples()->set_registers(data.substr(data.size() / 2));
    writeFile(path("garbage"), kMagic + header + frame(batch));
    const LoadedTrace loaded = loadCapture(path("garbage"));
    for (const Sample &s : loaded.capture.samples)
      EXPECT_TRUE(s.regs.empty() || s.regs.size() == 21u);
  }
}

TEST_F(TraceFile, FailedSaveLeavesTheExistingFileAlone) {
  const std::string target = path("keep.strobe");
  writeFile(target, "precious");
  fs::create_directory(target + ".tmp"); // the temporary file cannot be created
  try {
    saveCapture(target, handBuiltCapture(Isa::X86_64));
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot save " + target + ": cannot create " + target + ".tmp: Is a directory");
  }
  EXPECT_EQ(readFile(target), "precious");
}

TEST_F(TraceFile, SaveIntoAnUnwritableDirectoryFails) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root writes into read-only directories";
  const std::string target = path("keep.strobe");
  writeFile(target, "precious");
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  try {
    saveCapture(target, handBuiltCapture(Isa::X86_64));
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot save " + target + ": cannot create " + target + ".tmp: Permission denied");
  }
  EXPECT_EQ(readFile(target), "precious");
}

TEST_F(TraceFile, SaveReplacesAnExistingFile) {
  const std::string target = path("old.strobe");
  writeFile(target, "an older capture");
  saveCapture(target, handBuiltCapture(Isa::AArch64));
  EXPECT_EQ(loadCapture(target).capture.header.isa, Isa::AArch64);
  EXPECT_FALSE(fs::exists(target + ".tmp"));
}

TEST(TraceWriter, ReportsAFullDisk) {
  TraceWriter writer("/dev/full");
  writer.writeHeader({});
  try {
    writer.writeEnd({});
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()), "cannot write /dev/full: No space left on device");
  }
}

TEST(TraceWriter, SaveNamesTheFileTheUserGaveFirst) {
  try {
    saveCapture("/nonexistent-dir/x.strobe", Capture{});
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()), "cannot save /nonexistent-dir/x.strobe: cannot create "
                                     "/nonexistent-dir/x.strobe.tmp: No such file or directory");
  }
}

TEST(TraceWriter, ReportsAnUncreatableFile) {
  try {
    TraceWriter writer("/nonexistent-dir/x.strobe");
    ADD_FAILURE();
  } catch (const TraceError &e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot create /nonexistent-dir/x.strobe: No such file or directory");
  }
}
