#include "target/RemotePackets.h"

#include <charconv>

namespace strobe {
namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// The byte written as two hex digits at text[2 * k]; -1 when they are not hex.
int hexByte(std::string_view text, size_t k) {
  const int high = hexDigit(text[2 * k]);
  const int low = hexDigit(text[2 * k + 1]);
  return high < 0 || low < 0 ? -1 : high << 4 | low;
}

std::optional<int> hexNumber(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    return std::nullopt;
  return value;
}

} // namespace

std::optional<RemoteStop> parseStopReply(std::string_view reply) {
  if (reply.size() < 3)
    return std::nullopt;
  RemoteStop stop;
  const char kind = reply[0];
  // W and X may carry ";process:PID" after their number.
  const std::string_view number = reply.substr(1, reply.find(';') - 1);
  switch (kind) {
  case 'T':
  case 'S': {
    std::optional<int> signo = hexNumber(reply.substr(1, 2));
    if (!signo)
      return std::nullopt;
    stop.signo = *signo;
    for (std::string_view rest = reply.substr(3); !rest.empty();) {
      const size_t end = rest.find(';');
      const std::string_view pair = rest.substr(0, end);
      if (pair.starts_with("thread:"))
        stop.thread = pair.substr(7);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
    return stop;
  }
  case 'W':
  case 'X': {
    std::optional<int> value = hexNumber(number);
    if (!value)
      return std::nullopt;
    stop.kind = kind == 'W' ? RemoteStop::Kind::Exited : RemoteStop::Kind::Terminated;
    (kind == 'W' ? stop.code : stop.signo) = *value;
    return stop;
  }
  default:
    return std::nullopt;
  }
}

bool readRegisterWords(std::string_view block, RemoteRegister where, unsigned words,
                       uint64_t *out) {
  if (where.size == 0 || where.size > 8 * size_t{words} ||
      (where.offset + where.size) * 2 > block.size())
    return false;
  for (unsigned w = 0; w < words; ++w)
    out[w] = 0;
  for (size_t i = 0; i < where.size; ++i) {
    const int byte = hexByte(block, where.offset + i);
    if (byte < 0)
      return false;
    out[i / 8] |= uint64_t(byte) << (8 * (i % 8));
  }
  return true;
}

std::optional<std::vector<uint8_t>> decodeHexBytes(std::string_view reply) {
  if (reply.empty() || reply.size() % 2 != 0) // an error is E and two digits
    return std::nullopt;
  std::vector<uint8_t> bytes(reply.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int byte = hexByte(reply, i);
    if (byte < 0)
      return std::nullopt;
    bytes[i] = static_cast<uint8_t>(byte);
  }
  return bytes;
}

} // namespace strobe
