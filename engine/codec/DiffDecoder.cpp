#include "codec/DiffDecoder.h"

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

struct Block {
  uint64_t flags = 0;
  uint64_t records = 0;
  Bytes payload; // as stored
  uint64_t rawSize = 0;
  size_t end = 0; // offset just past the block
};

// Parses and checks the block framing at `at` (which holds a sync); the reason it is unusable.
std::optional<std::string> readBlock(Bytes stream, size_t at, uint32_t keyframeInterval,
                                     Block &block) {
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
  uLong crc = crc32(0, fields.data(), static_cast<uInt>(fieldsSize));
  crc = crc32(crc, block.payload.data(), static_cast<uInt>(block.payload.size()));
  if (crc != stored)
    return "CRC mismatch";
  block.end = static_cast<size_t>(block.payload.data() + block.payload.size() - stream.data());
  return std::nullopt;
}

std::optional<std::string> decodeRecords(RecordDecoder &decoder, Bytes payload, uint64_t count,
                                         bool afterGap, const DiffDecoder::Visitor &visit,
                                         uint64_t &decoded) {
  decoder.beginBlock();
  for (uint64_t i = 0; i < count; ++i) {
    if (const char *problem = decoder.decode(payload))
      return "record " + std::to_string(i) + ": " + problem;
    decoder.markGap(i == 0 && afterGap);
    visit(decoder.record());
    ++decoded;
  }
  if (!payload.empty())
    return "bytes after the last record";
  return std::nullopt;
}

} // namespace

DecodeReport DiffDecoder::decode(Bytes stream, const Visitor &visit) {
  DecodeReport report;
  Bytes rest = stream;
  StreamHeader header;
  if (auto problem = readStreamHeader(rest, header)) {
    report.damage.push_back({0, *problem});
    return report;
  }
  report.header = header;
  RecordDecoder decoder(header, model_);
  size_t at = stream.size() - rest.size();
  bool afterDamage = false;
  auto damaged = [&](size_t offset, std::string reason) {
    report.damage.push_back({offset, std::move(reason)});
    afterDamage = true;
  };
  while (at < stream.size()) {
    if (stream.size() - at < kBlockSync.size() ||
        !std::equal(kBlockSync.begin(), kBlockSync.end(),
                    stream.begin() + static_cast<ptrdiff_t>(at))) {
      const size_t next = findSync(stream, at + 1);
      damaged(at, "no block at byte " + std::to_string(at) + "; skipped " +
                      std::to_string(next - at) + " bytes");
      at = next;
      continue;
    }
    Block block;
    std::optional<std::string> problem = readBlock(stream, at, header.keyframeInterval, block);
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
    if (!problem)
      problem = decodeRecords(decoder, payload, block.records,
                              afterDamage || (block.flags & kBlockAfterGap), visit, report.records);
    if (problem) {
      damaged(at, *problem + " in the block at byte " + std::to_string(at));
      at = findSync(stream, at + 1);
      continue;
    }
    afterDamage = false;
    at = block.end;
  }
  return report;
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
  return decodeRecords(decoder, payload, count, false, visit, decoded);
}

} // namespace strobe
