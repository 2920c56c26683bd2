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

// Where a block's records stopped decoding: at record `index`, for `what` (null: bytes were
// left after the last record).
struct RecordsProblem {
  uint64_t index = 0;
  const char *what = nullptr;
};

// Decodes the `count` records of one block payload, calling visit(record) for each, and counts
// them into `decoded`. In the header so that the per-record loop is compiled with its visitor: an
// indirect call per record had cost about 5 % of decoding.
template <typename Visit>
std::optional<RecordsProblem> decodeRecords(RecordDecoder &decoder,
                                            std::span<const uint8_t> payload, uint64_t count,
                                            bool afterGap, Visit &visit, uint64_t &decoded) {
  decoder.beginBlock();
  for (uint64_t i = 0; i < count; ++i) {
    if (const char *problem = decoder.decode(payload)) [[unlikely]]
      return RecordsProblem{i, problem};
    decoder.markGap(i == 0 && afterGap);
    visit(decoder.record());
    ++decoded;
  }
  if (!payload.empty())
    return RecordsProblem{count, nullptr};
  return std::nullopt;
}

// A stream's blocks, read one at a time: framing, CRC and decompression checked, damaged blocks
// reported and skipped to the next block sync.
class BlockReader {
public:
  struct Block {
    std::span<const uint8_t> payload; // raw (inflated if it was stored compressed)
    uint64_t records = 0;
    bool afterGap = false; // its first record follows a gap or damage
  };

  // `inflated` holds decompressed payloads: the caller's, so that its storage is reused.
  BlockReader(std::span<const uint8_t> stream, MemoryOperandModel *model,
              std::vector<uint8_t> &inflated);

  // The next readable block; nullopt at the end (or when the stream header is unreadable).
  std::optional<Block> next();
  // How decoding the records of the block next() returned went.
  void decoded(const std::optional<RecordsProblem> &problem);

  RecordDecoder &decoder() { return *decoder_; }
  DecodeReport &report() { return report_; }

private:
  void damaged(size_t offset, std::string reason);

  std::span<const uint8_t> stream_;
  std::vector<uint8_t> &inflated_;
  DecodeReport report_;
  std::optional<RecordDecoder> decoder_;
  size_t at_ = 0;         // offset of the next block
  size_t blockStart_ = 0; // of the block next() returned
  size_t blockEnd_ = 0;   // just past it
  bool afterDamage_ = false;
};

class DiffDecoder {
public:
  // Called once per record, in order; the record object is reused, so copy what you keep.
  using Visitor = std::function<void(const TraceRecord &)>;

  // `model` (may be null) must compute the same slots as the encoder's model did.
  explicit DiffDecoder(MemoryOperandModel *model = nullptr) : model_(model) {}

  // visit: any callable taking a const TraceRecord &, like Visitor.
  template <typename Visit> DecodeReport decode(std::span<const uint8_t> stream, Visit &&visit) {
    BlockReader blocks(stream, model_, inflated_);
    while (const std::optional<BlockReader::Block> block = blocks.next())
      blocks.decoded(decodeRecords(blocks.decoder(), block->payload, block->records,
                                   block->afterGap, visit, blocks.report().records));
    return std::move(blocks.report());
  }

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
