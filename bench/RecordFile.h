// The raw record files bench/step_trace writes and bench/codec_size reads: trace records exactly
// as a tracer saw them, before any encoding, so every format is measured from the same input.
//   "STRECS1\n" | u8 isa | u8 has ext | u8 has memory | u8 0
//   per record: u8 gap | u8 instruction length | bytes | u64 regs[table] | u64 ext[slots] |
//               u16 accesses | per access: u64 address | u32 size | u8 read | u8 write |
//               read bytes | written bytes
// (all little-endian, the host's order on x86-64 and AArch64)
#pragma once

#include "codec/TraceRecord.h"
#include "target/Isa.h"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace strobe::bench {

inline constexpr char kRecordMagic[8] = {'S', 'T', 'R', 'E', 'C', 'S', '1', '\n'};

struct RecordFile {
  Isa isa = Isa::X86_64;
  bool ext = false;
  bool memory = false;
  std::vector<TraceRecord> records;
};

class RecordWriter {
public:
  RecordWriter(const std::string &path, Isa isa, bool ext, bool memory)
      : file_(std::fopen(path.c_str(), "wb")) {
    if (!file_)
      throw std::runtime_error("cannot create " + path);
    std::fwrite(kRecordMagic, 1, sizeof kRecordMagic, file_);
    const uint8_t head[4] = {static_cast<uint8_t>(isa), ext, memory, 0};
    std::fwrite(head, 1, sizeof head, file_);
  }
  ~RecordWriter() { std::fclose(file_); }
  RecordWriter(const RecordWriter &) = delete;
  RecordWriter &operator=(const RecordWriter &) = delete;

  void write(const TraceRecord &r) {
    put<uint8_t>(r.gap);
    put<uint8_t>(static_cast<uint8_t>(r.instruction.size()));
    bytes(r.instruction);
    for (uint64_t v : r.regs)
      put(v);
    for (uint64_t v : r.ext)
      put(v);
    put<uint16_t>(static_cast<uint16_t>(r.memory.size()));
    for (const MemoryAccess &a : r.memory) {
      put(a.address);
      put(a.size);
      put<uint8_t>(a.read);
      put<uint8_t>(a.write);
      bytes(a.readValue);
      bytes(a.writtenValue);
    }
  }

private:
  template <typename T> void put(T value) { std::fwrite(&value, sizeof value, 1, file_); }
  void bytes(const std::vector<uint8_t> &b) { std::fwrite(b.data(), 1, b.size(), file_); }
  FILE *file_;
};

inline RecordFile readRecordFile(const std::string &path) {
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    throw std::runtime_error("cannot open " + path);
  std::vector<uint8_t> data;
  uint8_t buffer[1 << 16];
  for (size_t got; (got = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
    data.insert(data.end(), buffer, buffer + got);
  std::fclose(file);
  size_t at = 0;
  auto need = [&](size_t n) {
    if (data.size() - at < n)
      throw std::runtime_error(path + ": truncated record file");
  };
  auto get = [&]<typename T>(T &value) {
    need(sizeof value);
    std::copy(data.begin() + at, data.begin() + at + sizeof value,
              reinterpret_cast<uint8_t *>(&value));
    at += sizeof value;
  };
  auto getBytes = [&](std::vector<uint8_t> &out, size_t n) {
    need(n);
    out.assign(data.begin() + at, data.begin() + at + n);
    at += n;
  };
  need(12);
  if (!std::equal(kRecordMagic, kRecordMagic + 8, data.begin()))
    throw std::runtime_error(path + " is not a record file");
  RecordFile out;
  out.isa = static_cast<Isa>(data[8]);
  out.ext = data[9];
  out.memory = data[10];
  at = 12;
  const RegisterTable &table = registerTable(out.isa);
  while (at < data.size()) {
    TraceRecord &r = out.records.emplace_back();
    uint8_t gap, length;
    get(gap);
    get(length);
    r.gap = gap;
    getBytes(r.instruction, length);
    r.regs.resize(table.regs.size());
    for (uint64_t &v : r.regs)
      get(v);
    r.ext.resize(out.ext ? table.extSlots() : 0);
    for (uint64_t &v : r.ext)
      get(v);
    uint16_t accesses;
    get(accesses);
    r.memory.resize(accesses);
    for (MemoryAccess &a : r.memory) {
      uint8_t read, write;
      get(a.address);
      get(a.size);
      get(read);
      get(write);
      a.read = read;
      a.write = write;
      if (a.read)
        getBytes(a.readValue, a.size);
      if (a.write)
        getBytes(a.writtenValue, a.size);
    }
  }
  return out;
}

} // namespace strobe::bench
