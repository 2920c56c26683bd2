#include "codec/DiffEncoder.h"

#include "codec/Crc32.h"
#include "codec/Varint.h"

#include <stdexcept>
#include <zlib.h>

namespace strobe {
namespace {

StreamHeader headerFor(const StreamLayout &layout, const EncoderOptions &options,
                       std::string_view modelName) {
  StreamHeader header;
  header.layout = layout;
  header.keyframeInterval = options.keyframeInterval;
  header.historyBits = options.historyBits;
  header.coding = options.coding;
  header.memoryModel = modelName;
  return header;
}

} // namespace

DiffEncoder::DiffEncoder(const StreamLayout &layout, const EncoderOptions &options,
                         MemoryOperandModel *model, std::string_view modelName)
    : coder_(headerFor(layout, options, modelName), model),
      compressionLevel_(options.compressionLevel) {
  if (compressionLevel_ < 0 || compressionLevel_ > 9)
    throw std::invalid_argument("zlib compression level " + std::to_string(compressionLevel_));
  writeStreamHeader(coder_.header(), stream_);
}

std::vector<uint8_t> DiffEncoder::finish() {
  closeBlock();
  std::vector<uint8_t> out;
  out.swap(stream_);
  writeStreamHeader(coder_.header(), stream_);
  records_ = 0;
  return out;
}

void DiffEncoder::closeBlock() {
  if (blockRecords_ == 0)
    return;
  const std::span<const uint8_t> payload = payload_.bytes();
  std::span<const uint8_t> stored = payload;
  uint64_t flags = blockAfterGap_ ? uint64_t{kBlockAfterGap} : 0;
  if (compressionLevel_ > 0) {
    uLongf size = compressBound(static_cast<uLong>(payload.size()));
    scratch_.resize(size);
    if (compress2(scratch_.data(), &size, payload.data(), static_cast<uLong>(payload.size()),
                  compressionLevel_) == Z_OK &&
        size < payload.size()) {
      stored = std::span<const uint8_t>(scratch_.data(), size);
      flags |= kBlockCompressed;
    }
  }
  stream_.insert(stream_.end(), kBlockSync.begin(), kBlockSync.end());
  const size_t fieldsStart = stream_.size();
  putVarint(flags, stream_);
  putVarint(blockRecords_, stream_);
  putVarint(stored.size(), stream_);
  if (flags & kBlockCompressed)
    putVarint(payload.size(), stream_);
  const uint32_t crc = crc32(stored, crc32(std::span(stream_).subspan(fieldsStart)));
  putLe32(crc, stream_);
  stream_.insert(stream_.end(), stored.begin(), stored.end());

  payload_.clear();
  blockRecords_ = 0;
  blockAfterGap_ = false;
  coder_.beginBlock();
}

} // namespace strobe
