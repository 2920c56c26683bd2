#include "target/Location.h"

#include <charconv>

namespace strobe {

std::optional<uint64_t> parseLocationNumber(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

std::optional<uint64_t> literalAddress(std::string_view location) {
  if (location.empty() || location[0] != '*')
    return std::nullopt;
  return parseLocationNumber(location.substr(1));
}

bool namesFunction(std::string_view location) {
  if (location.empty() || location[0] == '*')
    return false;
  size_t colon = location.rfind(':');
  return colon == std::string_view::npos || !parseLocationNumber(location.substr(colon + 1));
}

} // namespace strobe
