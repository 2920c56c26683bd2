// Bytes per record of trace records (bench/step_trace's files) in every format spec 001 compares,
// and the diff codec's speed. Prints one Markdown table row per file:
//   codec_size NAME=FILE...
// Formats:
//   raw snapshot   every GPR, rip and eflags: 18 x 8 = 144 bytes (the spec's anchor)
//   Tenet text     report/TenetText.h: changed registers per line, mr=/mw= memory
//   prior art      byte-aligned tagged items: per changed register or ext slot 1 B identifier +
//                  1 B number + 8 B value; instruction when it changed 1 + 1 + length; per memory
//                  direction 1 + 8 B address + 1 B size + value; 1 B delimiter per record
//   bitmap + 8 B   one bit per register and ext slot, 8 B per changed one; per memory direction
//                  8 B address + value
//   diff           this codec: without zlib (codec only) and as a trace file stores it (zlib
//                  level 1 blocks, in a saved capture minus an empty capture's size)
#include "RecordFile.h"
#include "codec/DiffDecoder.h"
#include "codec/DiffEncoder.h"
#include "io/TraceFile.h"
#include "io/TraceStreams.h"
#include "isa/InstructionInfo.h"
#include "report/TenetText.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <unistd.h>

using namespace strobe;

namespace {

size_t priorArtBytes(const std::vector<TraceRecord> &records) {
  size_t bytes = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const TraceRecord &r = records[i];
    const TraceRecord *p = i && !r.gap ? &records[i - 1] : nullptr;
    for (size_t s = 0; s < r.regs.size(); ++s)
      bytes += (!p || r.regs[s] != p->regs[s]) ? 10 : 0;
    for (size_t s = 0; s < r.ext.size(); ++s)
      bytes += (!p || p->ext.size() != r.ext.size() || r.ext[s] != p->ext[s]) ? 10 : 0;
    if (!p || r.instruction != p->instruction)
      bytes += 2 + r.instruction.size();
    for (const MemoryAccess &a : r.memory)
      bytes += (a.read ? 10 + a.size : 0) + (a.write ? 10 + a.size : 0);
    bytes += 1;
  }
  return bytes;
}

size_t bitmapBytes(const std::vector<TraceRecord> &records) {
  size_t bytes = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const TraceRecord &r = records[i];
    const TraceRecord *p = i && !r.gap ? &records[i - 1] : nullptr;
    bytes += (r.regs.size() + r.ext.size() + 7) / 8;
    for (size_t s = 0; s < r.regs.size(); ++s)
      bytes += (!p || r.regs[s] != p->regs[s]) ? 8 : 0;
    for (size_t s = 0; s < r.ext.size(); ++s)
      bytes += (!p || p->ext.size() != r.ext.size() || r.ext[s] != p->ext[s]) ? 8 : 0;
    for (const MemoryAccess &a : r.memory)
      bytes += (a.read ? 8 + a.size : 0) + (a.write ? 8 + a.size : 0);
  }
  return bytes;
}

size_t fileSize(const Capture &capture) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("codec_size." + std::to_string(getpid())))
          .string();
  saveCapture(path, capture);
  const size_t size = std::filesystem::file_size(path);
  std::filesystem::remove(path);
  return size;
}

// Trace-file bytes the records add: as a step trace, or as samples when they have no
// instruction bytes (one sample per record, 1 ms apart, pc as the stack).
size_t traceFileBytes(const bench::RecordFile &in, bool samples) {
  Capture capture;
  capture.header.isa = in.isa;
  const size_t empty = fileSize(capture);
  if (samples) {
    const unsigned pc = registerTable(in.isa).pc;
    for (size_t i = 0; i < in.records.size(); ++i)
      capture.samples.push_back(
          {i * 1'000'000, 1, true, false, {in.records[i].regs[pc]}, in.records[i].regs});
  } else {
    capture.stepTraces.emplace_back(in.isa, 1, in.memory, in.records);
  }
  return fileSize(capture) - empty;
}

// Wall time, from the vDSO (30 ns a read here). The thread's CPU clock would leave out the
// neighbours' share of a shared machine, but it is a system call (240 ns here), read twice per
// window of 256 records: about 2 ns of a record's 35. Wall time counts any preemption against
// the codec, never for it.
double nowSeconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct Speed {
  double encodeSeconds = 0, decodeSeconds = 0;
  size_t records = 0;
  // Encode + decode rate of each pass over the input. This VM runs in phases: for seconds at a
  // time every pass is 30-50 % slower (the host's doing: the same code on the same data), so the
  // whole-run figure depends on when it ran; the passes' spread shows which phase it met.
  std::vector<double> passes;
  double encode() const { return records / encodeSeconds / 1e6; }
  double decode() const { return records / decodeSeconds / 1e6; }
  double both() const { return records / (encodeSeconds + decodeSeconds) / 1e6; }
  double medianPass() const {
    std::vector<double> sorted = passes;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }
  double fastestPass() const { return *std::max_element(passes.begin(), passes.end()); }
};

// Sums every value the encoder reads of a record, which brings it into the cache.
uint64_t touch(const TraceRecord &r) {
  uint64_t sum = 0;
  for (const uint64_t v : r.regs)
    sum += v;
  for (const uint64_t v : r.ext)
    sum += v;
  for (const uint8_t b : r.instruction)
    sum += b;
  for (const MemoryAccess &a : r.memory) {
    sum += a.address;
    for (const uint8_t b : a.readValue)
      sum += b;
    for (const uint8_t b : a.writtenValue)
      sum += b;
  }
  return sum;
}

// Millions of records per second on one core. A tracer hands the encoder each record as it reads
// it, while it is in cache; so the input is encoded in windows of 256 records, each read whole
// before the clock runs (else this measures how fast 600-byte records stream from RAM).
Speed measure(const bench::RecordFile &in, const EncoderOptions &options,
              MemoryOperandModel *model) {
  constexpr size_t kWindow = 256;
  const StreamLayout layout = layoutFor(in.isa, in.ext);
  Speed speed;
  uint64_t checksum = 0;
  while (speed.encodeSeconds + speed.decodeSeconds < 2.0) {
    const double before = speed.encodeSeconds + speed.decodeSeconds;
    DiffEncoder encoder(layout, options, model, model ? kMemoryModelName : "");
    for (size_t at = 0; at < in.records.size(); at += kWindow) {
      const size_t end = std::min(in.records.size(), at + kWindow);
      for (size_t i = at; i < end; ++i)
        checksum += touch(in.records[i]);
      const double t0 = nowSeconds();
      for (size_t i = at; i < end; ++i)
        encoder.encode(in.records[i]);
      speed.encodeSeconds += nowSeconds() - t0;
    }
    const double t1 = nowSeconds();
    const std::vector<uint8_t> stream = encoder.finish();
    const double t2 = nowSeconds();
    const DecodeReport report =
        DiffDecoder(model).decode(stream, [&](const TraceRecord &r) { checksum += r.regs[0]; });
    const double t3 = nowSeconds();
    if (!report.clean() || report.records != in.records.size())
      throw std::runtime_error("the stream did not decode");
    speed.encodeSeconds += t2 - t1;
    speed.decodeSeconds += t3 - t2;
    speed.records += in.records.size();
    speed.passes.push_back(static_cast<double>(in.records.size()) /
                           (speed.encodeSeconds + speed.decodeSeconds - before) / 1e6);
  }
  if (checksum == 1) // keeps the reads from being optimised away
    std::puts("");
  return speed;
}

size_t streamBytes(const bench::RecordFile &in, const EncoderOptions &options,
                   MemoryOperandModel *model) {
  DiffEncoder encoder(layoutFor(in.isa, in.ext), options, model, kMemoryModelName);
  for (const TraceRecord &r : in.records)
    encoder.encode(r);
  return encoder.finish().size();
}

bool exactRoundTrip(const bench::RecordFile &in, MemoryOperandModel *model) {
  DiffEncoder encoder(layoutFor(in.isa, in.ext), kStepOptions, model, kMemoryModelName);
  for (const TraceRecord &r : in.records)
    encoder.encode(r);
  const DecodedStream decoded = decodeStream(encoder.finish(), model);
  return decoded.report.clean() && decoded.records == in.records;
}

} // namespace

struct Input {
  std::string name;
  bench::RecordFile records;
  bool samples;
};

int main(int argc, char **argv) {
  std::vector<Input> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    bench::RecordFile records = bench::readRecordFile(arg.substr(eq + 1));
    const bool samples = records.records.size() > 1 && records.records[1].instruction.empty();
    inputs.push_back({arg.substr(0, eq), std::move(records), samples});
  }
  std::printf(
      "Bytes per record:\n\n| records | n | raw snapshot | Tenet text | prior art | bitmap + 8 B "
      "| diff, codec only | diff, in the trace file | Tenet / trace file |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Input &input : inputs) {
    const bench::RecordFile &in = input.records;
    InstructionDecoder model(in.isa);
    const double n = static_cast<double>(in.records.size());
    std::string tenet;
    appendTenet(in.isa, in.records, tenet);
    EncoderOptions codecOnly = input.samples ? kSampleOptions : kStepOptions;
    codecOnly.compressionLevel = 0;
    const double stored = static_cast<double>(traceFileBytes(in, input.samples));
    std::printf("| %s%s | %zu | 144 | %.1f | %.1f | %.1f | %.2f | %.2f | %.0fx |\n",
                input.name.c_str(), exactRoundTrip(in, &model) ? "" : " (ROUND TRIP FAILED)",
                in.records.size(), tenet.size() / n, priorArtBytes(in.records) / n,
                bitmapBytes(in.records) / n, streamBytes(in, codecOnly, &model) / n, stored / n,
                tenet.size() / stored);
  }
  std::printf(
      "\nSpeed, million records per second (one core, wall time; passes: encode + decode of the "
      "whole input, median and fastest):\n\n| records | encode | decode | encode + decode | median "
      "pass | fastest pass | with zlib: encode | decode | encode + decode |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Input &input : inputs) {
    InstructionDecoder model(input.records.isa);
    EncoderOptions options = input.samples ? kSampleOptions : kStepOptions;
    const Speed zipped = measure(input.records, options, &model);
    options.compressionLevel = 0;
    const Speed plain = measure(input.records, options, &model);
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
                input.name.c_str(), plain.encode(), plain.decode(), plain.both(),
                plain.medianPass(), plain.fastestPass(), zipped.encode(), zipped.decode(),
                zipped.both());
  }
  return 0;
}
