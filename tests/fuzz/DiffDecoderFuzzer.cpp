// libFuzzer target for the diff-record decoder. The first byte picks what the rest is: a whole
// stream; or a block payload that the fuzzer frames with a valid header and CRC, so mutations reach
// the record decoder through the stream decoder as well as directly.
#include "codec/DiffDecoder.h"

#include <cstdint>
#include <zlib.h>

using namespace strobe;

namespace {

// Deterministic and cheap, like the real model: up to 3 slots at register + offset.
class FuzzModel : public MemoryOperandModel {
public:
  bool predict(std::span<const uint8_t> bytes, uint64_t pc, std::span<const uint64_t> regs,
               MemorySlots &out) override {
    out.clear();
    if (bytes.empty() || bytes[0] == 0xee)
      return false;
    for (unsigned k = 0; k < (bytes[0] & 3u); ++k)
      out.add(
          {regs[(bytes[0] >> 2) % regs.size()] + pc % 8 + 8 * k, 1u << (k + 1), k != 1, k != 0});
    return true;
  }
};

// Bit 0 the ISA, bit 1 extended state (stepped only), bits 2-4 the table, bit 5 sampled coding.
StreamHeader headerFrom(uint8_t choice) {
  StreamHeader header;
  header.coding = choice & 0x20 ? RecordCoding::Sampled : RecordCoding::Stepped;
  header.layout = layoutFor(choice & 1 ? Isa::AArch64 : Isa::X86_64,
                            (choice & 2) && header.coding == RecordCoding::Stepped);
  header.historyBits = (choice >> 2) & 7;
  header.keyframeInterval = 64;
  header.memoryModel = "fuzz";
  return header;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  FuzzModel model;
  const std::span<const uint8_t> rest(data + 2, size - 2);
  auto visit = [](const TraceRecord &record) {
    if (record.regs.empty())
      __builtin_trap(); // a record without registers is never valid
  };
  switch (data[0] % 3) {
  case 0:
    DiffDecoder(&model).decode(std::span(data + 1, size - 1), visit);
    break;
  case 1: {
    const StreamHeader header = headerFrom(data[1]);
    std::vector<uint8_t> stream;
    writeStreamHeader(header, stream);
    stream.insert(stream.end(), kBlockSync.begin(), kBlockSync.end());
    const std::vector<uint8_t> fields = {static_cast<uint8_t>(data[1] >> 6 & kBlockAfterGap),
                                         static_cast<uint8_t>(1 + data[1] % 60),
                                         static_cast<uint8_t>(std::min<size_t>(rest.size(), 127))};
    const std::span<const uint8_t> payload = rest.first(fields[2]);
    stream.insert(stream.end(), fields.begin(), fields.end());
    uLong crc = crc32(0, fields.data(), static_cast<uInt>(fields.size()));
    crc = crc32(crc, payload.data(), static_cast<uInt>(payload.size()));
    putLe32(static_cast<uint32_t>(crc), stream);
    stream.insert(stream.end(), payload.begin(), payload.end());
    DiffDecoder(&model).decode(stream, visit);
    break;
  }
  default:
    decodePayload(headerFrom(data[1]), &model, rest, 1 + data[1] % 50, visit);
    break;
  }
  return 0;
}
