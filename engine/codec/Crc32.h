// CRC-32 (the zlib / PNG / gzip polynomial): guards each diff-record block and each trace-file
// chunk.
#pragma once

#include <cstdint>
#include <span>

namespace strobe {

// The CRC of `bytes`; `running`, the CRC of what came before them, continues it (so
// crc32(b, crc32(a)) is the CRC of a followed by b), as zlib's crc32() does.
uint32_t crc32(std::span<const uint8_t> bytes, uint32_t running = 0);

} // namespace strobe
