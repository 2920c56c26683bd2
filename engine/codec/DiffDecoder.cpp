#include "codec/DiffDecoder.h"

#include "codec/Crc32.h"
#include "codec/Varint.h"

#include <algorithm>
#include <zlib.h>

namespace strobe {
namespace {

using Bytes = std::span<const uint8_t>;

// Offset of the first block sync at or after `from`, or the stream size.
size_t findSync(Bytes stream, size_t from) {
  if (from >= stream.size())
    return stream.size();
  const auto it = std::search(stream.begin() + static_cast<ptrdiff_t>(from), stream.end(),
                              kBlockSync.begin(), kBlockSync.end());
  return static_cast<size_t>(it - stream.begin());
}

struct FramedBlock {
  uint64_t flags = 0;
  uint64_t records = 0;
  Bytes payload; // as stored
  uint64_t rawSize = 0;
  size_t end = 0; // offset just past the block
};

// Parses and checks the block framing at `at` (which holds a sync); the reason it is unusable.
std::optional<std::string> readBlock(Bytes stream, size_t at, uint32_t keyframeInterval,
                                     FramedBlock &block) {
  Bytes in = stream.subspan(at + kBlockSync.size());
  const Bytes fields = in;
  uint64_t storedSize = 0;
  if (!getVarint(in, block.flags) || !getVarint(in, block.records) || !getVarint(in, storedSize))
    return "truncated block header";
  if (block.flags & ~uint64_t{kBlockCompressed | kBlockAfterGap})
    return "unknown block flags";
  if (block.records == 0 || block.records > keyframeInterval)
    return "impossible record count";
  block.rawSize = storedSize;
  if ((block.flags & kBlockCompressed) && !getVarint(in, block.rawSize))
    return "truncated block header";
  if (block.rawSize > kMaxBlockBytes || storedSize > kMaxBlockBytes)
    return "impossible block size";
  const size_t fieldsSize = fields.size() - in.size();
  if (in.size() < 4 + storedSize)
    return "truncated block";
  const uint32_t stored = getLe32(in);
  block.payload = in.subspan(4, storedSize);
  if (crc32(block.payload, crc32(fields.first(fieldsSize))) != stored)
    return "CRC mismatch";
  block.end = static_cast<size_t>(block.payload.data() + block.payload.size() - stream.data());
  return std::nullopt;
}

std::string describe(const RecordsProblem &problem) {
  if (!problem.what)
    return "bytes after the last record";
  return "record " + std::to_string(problem.index) + ": " + problem.what;
}

} // namespace

BlockReader::BlockReader(Bytes stream, MemoryOperandModel *model, std::vector<uint8_t> &inflated)
    : stream_(stream), inflated_(inflated) {
  Bytes rest = stream;
  StreamHeader header;
  if (auto problem = readStreamHeader(rest, header)) {
    report_.damage.push_back({0, *problem});
    at_ = stream.size();
    return;
  }
  report_.header = header;
  decoder_.emplace(header, model);
  at_ = stream.size() - rest.size();
}

void BlockReader::damaged(size_t offset, std::string reason) {
  report_.damage.push_back({offset, std::move(reason)});
  afterDamage_ = true;
}

std::optional<BlockReader::Block> BlockReader::next() {
  while (at_ < stream_.size()) {
    const size_t at = at_;
    if (stream_.size() - at < kBlockSync.size() ||
        !std::equal(kBlockSync.begin(), kBlockSync.end(),
                    stream_.begin() + static_cast<ptrdiff_t>(at))) {
      at_ = findSync(stream_, at + 1);
      damaged(at, "no block at byte " + std::to_string(at) + "; skipped " +
                      std::to_string(at_ - at) + " bytes");
      continue;
    }
    FramedBlock block;
    std::optional<std::string> problem =
        readBlock(stream_, at, report_.header->keyframeInterval, block);
    Bytes payload = block.payload;
    if (!problem && (block.flags & kBlockCompressed)) {
      inflated_.resize(block.rawSize);
      uLongf size = static_cast<uLongf>(block.rawSize);
      if (uncompress(inflated_.data(), &size, payload.data(), static_cast<uLong>(payload.size())) !=
              Z_OK ||
          size != block.rawSize)
        problem = "undecompressable payload";
      payload = Bytes(inflated_.data(), block.rawSize);
    }
    if (problem) {
      damaged(at, *problem + " in the block at byte " + std::to_string(at));
      at_ = findSync(stream_, at + 1);
      continue;
    }
    blockStart_ = at;
    blockEnd_ = block.end;
    return Block{payload, block.records, afterDamage_ || (block.flags & kBlockAfterGap)};
  }
  return std::nullopt;
}

void BlockReader::decoded(const std::optional<RecordsProblem> &problem) {
  if (!problem) {
    afterDamage_ = false;
    at_ = blockEnd_;
    return;
  }
  damaged(blockStart_, describe(*problem) + " in the block at byte " + std::to_string(blockStart_));
  at_ = findSync(stream_, blockStart_ + 1);
}

DecodedStream decodeStream(Bytes stream, MemoryOperandModel *model) {
  DecodedStream out;
  DiffDecoder decoder(model);
  out.report = decoder.decode(stream, [&](const TraceRecord &r) { out.records.push_back(r); });
  return out;
}

std::optional<std::string> decodePayload(const StreamHeader &header, MemoryOperandModel *model,
                                         Bytes payload, uint64_t count,
                                         const DiffDecoder::Visitor &visit) {
  RecordDecoder decoder(header, model);
  uint64_t decoded = 0;
  const std::optional<RecordsProblem> problem =
      decodeRecords(decoder, payload, count, false, visit, decoded);
  if (!problem)
    return std::nullopt;
  return describe(*problem);
}

} // namespace strobe
