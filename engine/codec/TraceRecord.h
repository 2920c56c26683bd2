// What the production diff-record codec (spec 001) stores per stop of one thread: a single-step
// record (the state AFTER one instruction ran) or a periodic sample (no instruction bytes).
#pragma once

#include <cstdint>
#include <vector>

namespace strobe {

struct MemoryAccess {
  uint64_t address = 0;
  uint32_t size = 0; // bytes
  bool read = false;
  bool write = false;
  std::vector<uint8_t> readValue;    // `size` bytes, memory order, when `read`
  std::vector<uint8_t> writtenValue; // `size` bytes, memory order, when `write`

  friend bool operator==(const MemoryAccess &, const MemoryAccess &) = default;
};

struct TraceRecord {
  std::vector<uint64_t> regs; // registerTable(isa).regs order, pc included
  // registerTable(isa).ext in 64-bit slots (a 16-byte register takes two, low half first); empty
  // when the trace does not record extended state.
  std::vector<uint64_t> ext;
  std::vector<uint8_t> instruction; // bytes of the instruction just executed; empty for samples
  // The memory that instruction accessed, its addresses computed from the previous record's
  // registers (the registers before it ran).
  std::vector<MemoryAccess> memory;
  // The thread ran unrecorded between the previous record and this one (or a damaged stretch of
  // the stream was skipped): this record does not follow from the previous one.
  bool gap = false;

  friend bool operator==(const TraceRecord &, const TraceRecord &) = default;
};

} // namespace strobe
