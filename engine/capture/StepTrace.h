// One thread single-stepped: one record per instruction, the first being the state the trace
// starts from. Held as spec 001's diff-record streams, the way the trace file stores them: a
// record takes a byte or two there, where decoded it takes a kilobyte (the x86-64 vector state
// alone is 720 bytes), and a `strobe step --until` of a million instructions had held a gigabyte
// in the debugger.
#pragma once

#include "codec/DiffDecoder.h"
#include "codec/DiffEncoder.h"
#include "codec/TraceRecord.h"
#include "isa/InstructionInfo.h"
#include "target/Isa.h"

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace strobe {

class StepTrace {
public:
  // Records whose every one carries the extended state, or none does, as one diff-record stream
  // (io/TraceStreams.h's kStepOptions and memory operand model): a StepTraceChunk of the file.
  struct Chunk {
    std::vector<uint8_t> stream;
    uint64_t records = 0;
  };

  StepTrace(Isa isa, uint64_t tid, bool memoryRecorded);
  // With `records` appended.
  StepTrace(Isa isa, uint64_t tid, bool memoryRecorded, std::span<const TraceRecord> records);
  StepTrace(const StepTrace &other);
  StepTrace &operator=(const StepTrace &other);
  StepTrace(StepTrace &&) noexcept;
  StepTrace &operator=(StepTrace &&) noexcept;
  ~StepTrace();

  Isa isa() const { return isa_; }
  uint64_t tid() const { return tid_; }
  bool memoryRecorded() const { return memoryRecorded_; } // records carry their memory accesses
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The record appended last; only when !empty().
  const TraceRecord &back() const { return last_; }

  // Appends a record (with `gap` set: it does not follow from the one before). Throws
  // std::invalid_argument, appending nothing, for a record that does not fit the ISA's
  // register table or the format's limits.
  void append(const TraceRecord &record);
  // The next record appended is record `number` of the trace as it was taken: the ones between
  // were lost (a damaged chunk of a trace file).
  void numberNext(uint64_t number) { numbering_.emplace_back(size_, number); }
  // The number, as the trace was taken, of the record at `position` in this one.
  uint64_t numberAt(uint64_t position) const;

  // Calls visit(const TraceRecord &) for each record, in order; the record's storage is reused
  // for the next one, so copy what you keep.
  template <typename Visit> void forEach(Visit &&visit) const {
    InstructionDecoder model(isa_);
    for (const Chunk &chunk : chunks()) {
      const DecodeReport report = DiffDecoder(&model).decode(chunk.stream, visit);
      if (!report.clean() || report.records != chunk.records)
        throw std::logic_error("a step trace's own records did not decode");
    }
  }
  // Every record, decoded: for short traces.
  std::vector<TraceRecord> records() const;
  // The streams, closing the one being written (the next append starts another).
  const std::vector<Chunk> &chunks() const;

  friend bool operator==(const StepTrace &a, const StepTrace &b);

private:
  void closeChunk() const;

  Isa isa_;
  uint64_t tid_;
  bool memoryRecorded_;
  uint64_t size_ = 0;
  TraceRecord last_;
  // Closed streams, and the one being written: closing it is no change a reader can see, hence
  // mutable.
  mutable std::vector<Chunk> chunks_;
  mutable std::unique_ptr<DiffEncoder> open_;
  // (position, number) where records were lost before the one at `position` (numberNext()).
  std::vector<std::pair<uint64_t, uint64_t>> numbering_;
  bool openExt_ = false;                      // open_'s records carry the extended state
  std::unique_ptr<InstructionDecoder> model_; // open_'s memory operand model
};

} // namespace strobe
