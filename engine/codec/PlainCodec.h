// The simplest register codec. A keyframe record is every value as a varint; any other record is
// a varint bitmap of the registers that changed (bit i = register i) followed by each changed
// value as a varint, lowest register first. Holds at most 64 registers.
#pragma once

#include "codec/RegisterCodec.h"

namespace strobe {

class PlainCodec final : public RegisterCodec {
public:
  static constexpr std::string_view kName = "plain";
  static constexpr uint32_t kVersion = 1;
  static constexpr size_t kMaxRegisters = 64;

  // Throws std::invalid_argument above kMaxRegisters.
  explicit PlainCodec(size_t registerCount);

  std::string_view name() const override { return kName; }
  uint32_t version() const override { return kVersion; }
  void reset() override;
  // Throws std::invalid_argument when `regs` does not have the codec's register count.
  void encode(std::span<const uint64_t> regs, std::vector<uint8_t> &out) override;
  bool decode(std::span<const uint8_t> &in, std::vector<uint64_t> &regs) override;

private:
  std::vector<uint64_t> previous_;
  bool keyframe_ = true;
};

} // namespace strobe
