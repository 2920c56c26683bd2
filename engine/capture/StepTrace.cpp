#include "capture/StepTrace.h"
#include "io/TraceStreams.h"

#include <algorithm>

namespace strobe {

StepTrace::StepTrace(Isa isa, uint64_t tid, bool memoryRecorded)
    : isa_(isa), tid_(tid), memoryRecorded_(memoryRecorded) {}

StepTrace::StepTrace(Isa isa, uint64_t tid, bool memoryRecorded,
                     std::span<const TraceRecord> records)
    : StepTrace(isa, tid, memoryRecorded) {
  for (const TraceRecord &record : records)
    append(record);
}

StepTrace::StepTrace(const StepTrace &other)
    : isa_(other.isa_), tid_(other.tid_), memoryRecorded_(other.memoryRecorded_),
      size_(other.size_), last_(other.last_), chunks_(other.chunks()),
      numbering_(other.numbering_) {}

StepTrace &StepTrace::operator=(const StepTrace &other) {
  if (this != &other)
    *this = StepTrace(other);
  return *this;
}

StepTrace::StepTrace(StepTrace &&) noexcept = default;
StepTrace &StepTrace::operator=(StepTrace &&) noexcept = default;
StepTrace::~StepTrace() = default;

void StepTrace::append(const TraceRecord &record) {
  const bool withExt = !record.ext.empty();
  if (open_ && (open_->records() == kStepChunkRecords || withExt != openExt_))
    closeChunk();
  if (!open_) {
    if (!model_)
      model_ = std::make_unique<InstructionDecoder>(isa_);
    open_ = std::make_unique<DiffEncoder>(layoutFor(isa_, withExt), kStepOptions, model_.get(),
                                          kMemoryModelName);
    openExt_ = withExt;
  }
  open_->encode(record);
  last_ = record;
  ++size_;
}

void StepTrace::closeChunk() const {
  if (!open_)
    return;
  const uint64_t records = open_->records();
  if (records > 0) // none when the first record was refused
    chunks_.push_back({open_->finish(), records});
  open_.reset();
}

const std::vector<StepTrace::Chunk> &StepTrace::chunks() const {
  closeChunk();
  return chunks_;
}

std::vector<TraceRecord> StepTrace::records() const {
  std::vector<TraceRecord> all;
  all.reserve(size_);
  forEach([&](const TraceRecord &record) { all.push_back(record); });
  return all;
}

uint64_t StepTrace::numberAt(uint64_t position) const {
  auto after = std::upper_bound(numbering_.begin(), numbering_.end(), position,
                                [](uint64_t p, const auto &entry) { return p < entry.first; });
  if (after == numbering_.begin())
    return position;
  const auto &[from, number] = *std::prev(after);
  return number + (position - from);
}

bool operator==(const StepTrace &a, const StepTrace &b) {
  return a.isa_ == b.isa_ && a.tid_ == b.tid_ && a.memoryRecorded_ == b.memoryRecorded_ &&
         a.size_ == b.size_ && a.numbering_ == b.numbering_ && a.records() == b.records();
}

} // namespace strobe
