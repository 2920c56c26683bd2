// Writes one thread's records as a diff-record stream (format in DiffFormat.h): a stream header,
// then CRC-guarded blocks that each begin with a keyframe.
#pragma once

#include "codec/RecordCoder.h"

namespace strobe {

struct EncoderOptions {
  uint32_t keyframeInterval = 4096; // records per block
  unsigned historyBits = 12;        // prediction table of 2^historyBits pcs
  int compressionLevel = 1;         // zlib level for block payloads; 0 = store them raw
  RecordCoding coding = RecordCoding::Stepped;
};

class DiffEncoder {
public:
  // `model` (may be null: every memory access in escape form) must outlive the encoder;
  // `modelName` goes into the stream header so readers know which model the slots need.
  // Throws std::invalid_argument for an unusable layout or options.
  DiffEncoder(const StreamLayout &layout, const EncoderOptions &options = {},
              MemoryOperandModel *model = nullptr, std::string_view modelName = {});

  // Appends a record; a record with `gap` set starts a new block. Throws std::invalid_argument
  // (adding nothing) when the record does not fit the layout.
  // Inline: a record then costs one call, into the record coder.
  void encode(const TraceRecord &record) {
    if (record.gap) [[unlikely]]
      closeBlock();
    coder_.encode(record, payload_);
    if (record.gap) [[unlikely]]
      blockAfterGap_ = true; // only now: a record refused above starts nothing
    ++records_;
    if (++blockRecords_ == coder_.header().keyframeInterval || payload_.size() >= kBlockTargetBytes)
        [[unlikely]]
      closeBlock();
  }
  // Closes the open block and hands over the stream written so far, which decodes on its own;
  // the encoder then starts a new stream.
  std::vector<uint8_t> finish();

  // Bytes finish() would return now (the open block counted uncompressed).
  size_t size() const { return stream_.size() + payload_.size(); }
  uint64_t records() const { return records_; }
  const StreamHeader &header() const { return coder_.header(); }

private:
  void closeBlock();

  RecordEncoder coder_;
  int compressionLevel_;
  std::vector<uint8_t> stream_; // header and closed blocks
  ByteBuffer payload_;          // the open block's records
  std::vector<uint8_t> scratch_;
  uint32_t blockRecords_ = 0;
  bool blockAfterGap_ = false;
  uint64_t records_ = 0;
};

} // namespace strobe
