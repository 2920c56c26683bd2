#include "codec/Crc32.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>
#include <zlib.h>

namespace strobe {
namespace {

uint32_t zlibCrc(std::span<const uint8_t> bytes, uint32_t running = 0) {
  return static_cast<uint32_t>(::crc32(running, bytes.data(), static_cast<uInt>(bytes.size())));
}

TEST(Crc32, MatchesTheStandardCheckValue) {
  const std::string text = "123456789";
  EXPECT_EQ(crc32({reinterpret_cast<const uint8_t *>(text.data()), text.size()}), 0xcbf43926u);
  EXPECT_EQ(crc32({}), 0u);
  EXPECT_EQ(crc32({}, 0x12345678u), 0x12345678u);
}

// Files already written carry this CRC as zlib computes it (blocks) or a byte table did (file
// chunks): every length and alignment the vector code treats apart (short tails, 16- and 64-byte
// folds, the 256-byte steps of the widest version) gives zlib's value.
TEST(Crc32, EqualsZlibsAtEveryLengthAndAlignment) {
  std::mt19937_64 random(7);
  std::vector<uint8_t> bytes(4096 + 64);
  for (uint8_t &b : bytes)
    b = static_cast<uint8_t>(random());
  for (size_t offset = 0; offset < 64; offset += 7)
    for (size_t size = 0; size <= 1100; ++size) {
      const std::span<const uint8_t> piece(bytes.data() + offset, size);
      ASSERT_EQ(crc32(piece), zlibCrc(piece)) << "offset " << offset << ", size " << size;
    }
  const std::span<const uint8_t> all(bytes.data(), 4096);
  EXPECT_EQ(crc32(all), zlibCrc(all));
}

TEST(Crc32, ContinuesFromARunningValueAtAnySplit) {
  std::mt19937_64 random(11);
  std::vector<uint8_t> bytes(700);
  for (uint8_t &b : bytes)
    b = static_cast<uint8_t>(random());
  const std::span<const uint8_t> all(bytes);
  const uint32_t whole = zlibCrc(all);
  for (size_t split = 0; split <= all.size(); ++split)
    ASSERT_EQ(crc32(all.subspan(split), crc32(all.first(split))), whole) << "split " << split;
  EXPECT_EQ(crc32(all.subspan(100), zlibCrc(all.first(100))), whole);
}

} // namespace
} // namespace strobe
