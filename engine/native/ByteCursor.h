// Bounds-checked little-endian reads over bytes strobe did not write (ELF files, CFI, inferior
// memory): a malformed file must fail a lookup, never crash the debugger.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace strobe {

class ByteCursor {
public:
  explicit ByteCursor(std::span<const uint8_t> bytes, size_t pos = 0) : bytes_(bytes), pos_(pos) {}

  bool ok() const { return ok_; }
  bool atEnd() const { return pos_ >= bytes_.size(); }
  size_t pos() const { return pos_; }
  void seek(size_t pos) {
    if (pos > bytes_.size())
      ok_ = false;
    pos_ = pos;
  }
  void skip(uint64_t n) {
    if (n > bytes_.size() - std::min(pos_, bytes_.size()))
      ok_ = false;
    else
      pos_ += n;
  }

  template <typename T> T read() {
    T value{};
    if (!ok_ || pos_ > bytes_.size() || bytes_.size() - pos_ < sizeof(T)) {
      ok_ = false;
      return value;
    }
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      auto byte = read<uint8_t>();
      if (!ok_)
        return 0;
      if (shift < 64)
        value |= uint64_t{byte & 0x7fu} << shift;
      if (!(byte & 0x80))
        return value;
    }
  }

  int64_t sleb() {
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
      byte = read<uint8_t>();
      if (!ok_)
        return 0;
      if (shift < 64)
        value |= uint64_t{byte & 0x7fu} << shift;
      shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40))
      value |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(value);
  }

  // A NUL-terminated string; empty and !ok() when unterminated.
  std::string_view cstring() {
    if (!ok_ || pos_ >= bytes_.size()) {
      ok_ = false;
      return {};
    }
    const auto *start = reinterpret_cast<const char *>(bytes_.data() + pos_);
    const void *nul = std::memchr(start, 0, bytes_.size() - pos_);
    if (!nul) {
      ok_ = false;
      return {};
    }
    std::string_view s(start, static_cast<const char *>(nul) - start);
    pos_ += s.size() + 1;
    return s;
  }

private:
  std::span<const uint8_t> bytes_;
  size_t pos_;
  bool ok_ = true;
};

} // namespace strobe
