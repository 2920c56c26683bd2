// CRC-32 (the zlib / PNG polynomial), guarding each trace-file chunk.
#pragma once

#include <cstdint>
#include <span>

namespace strobe {

uint32_t crc32(std::span<const uint8_t> bytes);

} // namespace strobe
