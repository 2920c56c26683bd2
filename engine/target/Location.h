// The pieces of a location (`strobe step --until`, `strobe loop --at`) that mean the same in every
// debugger, parsed once: the front-ends' Target::resolve read the rest their debugger's way.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace strobe {

// A whole unsigned number, decimal or 0x hex; nullopt for anything else.
std::optional<uint64_t> parseLocationNumber(std::string_view text);
// `*ADDRESS` with a literal address (decimal or 0x hex); nullopt for anything else.
std::optional<uint64_t> literalAddress(std::string_view location);
// Whether a location names a function rather than a line (FILE:LINE) or an address (*ADDRESS).
bool namesFunction(std::string_view location);

} // namespace strobe
