// Reads a diff-record stream (format in DiffFormat.h) back into records. Damage (a cut, flipped
// bytes) loses the blocks it touches: the decoder reports it, looks for the next block sync and
// carries on from that block's keyframe, marking its first record as following a gap.
#pragma once

#include "codec/RecordCoder.h"

#include <functional>

namespace strobe {

struct StreamDamage {
  size_t offset = 0;  // where in the stream the unreadable part starts
  std::string reason; // e.g. "CRC mismatch in the block at byte 1234"
};

struct DecodeReport {
  std::optional<StreamHeader> header; // absent: the stream header itself is unreadable
  uint64_t records = 0;
  std::vector<StreamDamage> damage;

  bool clean() const { return header && damage.empty(); }
};

class DiffDecoder {
public:
  // Called once per record, in order; the record object is reused, so copy what you keep.
  using Visitor = std::function<void(const TraceRecord &)>;

  // `model` (may be null) must compute the same slots as the encoder's model did.
  explicit DiffDecoder(MemoryOperandModel *model = nullptr) : model_(model) {}

  DecodeReport decode(std::span<const uint8_t> stream, const Visitor &visit);

private:
  MemoryOperandModel *model_;
  std::vector<uint8_t> inflated_;
};

// Every record of a stream, with the report.
struct DecodedStream {
  DecodeReport report;
  std::vector<TraceRecord> records;
};
DecodedStream decodeStream(std::span<const uint8_t> stream, MemoryOperandModel *model = nullptr);

// Decodes `count` records from a raw block payload: the record decoder without the framing,
// for fuzzing it directly (a fuzzer rarely gets past a CRC). The reason it stopped, if it did.
std::optional<std::string> decodePayload(const StreamHeader &header, MemoryOperandModel *model,
                                         std::span<const uint8_t> payload, uint64_t count,
                                         const DiffDecoder::Visitor &visit);

} // namespace strobe
