#include "codec/PlainCodec.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace strobe {

PlainCodec::PlainCodec(size_t registerCount) : previous_(registerCount) {
  if (registerCount > kMaxRegisters)
    throw std::invalid_argument("plain codec holds at most 64 registers, not " +
                                std::to_string(registerCount));
}

void PlainCodec::reset() {
  keyframe_ = true;
  std::fill(previous_.begin(), previous_.end(), 0);
}

void PlainCodec::encode(std::span<const uint64_t> regs, std::vector<uint8_t> &out) {
  if (regs.size() != previous_.size())
    throw std::invalid_argument("plain codec expects " + std::to_string(previous_.size()) +
                                " registers, got " + std::to_string(regs.size()));
  if (keyframe_) {
    for (uint64_t value : regs)
      putVarint(value, out);
  } else {
    uint64_t changed = 0;
    for (size_t i = 0; i < regs.size(); ++i)
      if (regs[i] != previous_[i])
        changed |= uint64_t{1} << i;
    putVarint(changed, out);
    for (size_t i = 0; i < regs.size(); ++i)
      if (changed & (uint64_t{1} << i))
        putVarint(regs[i], out);
  }
  std::copy(regs.begin(), regs.end(), previous_.begin());
  keyframe_ = false;
}

bool PlainCodec::decode(std::span<const uint8_t> &in, std::vector<uint64_t> &regs) {
  const size_t count = previous_.size();
  // A keyframe carries every register, as if all had changed.
  uint64_t changed = count == kMaxRegisters ? ~uint64_t{0} : (uint64_t{1} << count) - 1;
  if (!keyframe_) {
    uint64_t bitmap = 0;
    if (!getVarint(in, bitmap) || (bitmap & ~changed) != 0)
      return false;
    changed = bitmap;
  }
  for (size_t i = 0; i < count; ++i)
    if ((changed & (uint64_t{1} << i)) && !getVarint(in, previous_[i]))
      return false;
  regs = previous_;
  keyframe_ = false;
  return true;
}

} // namespace strobe
