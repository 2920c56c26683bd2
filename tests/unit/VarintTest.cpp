#include "codec/Varint.h"
#include "codec/DiffFormat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>

#include <random>
#include <vector>

using namespace strobe;

namespace {

// The readers take a branch-free path when 8 bytes can be read and a byte-by-byte one near the
// end of the input: each case is read from its exact bytes (the slow path) and with padding.
std::vector<std::vector<uint8_t>> withAndWithoutPadding(const std::vector<uint8_t> &bytes) {
  std::vector<uint8_t> padded = bytes;
  padded.insert(padded.end(), 12, 0xff); // continuation bits: a reader must not run into them
  return {bytes, padded};
}

// LEB128 bytes of `value`, written here one group at a time.
std::vector<uint8_t> leb128(uint64_t value) {
  std::vector<uint8_t> out;
  do {
    const uint8_t group = value & 0x7f;
    value >>= 7;
    out.push_back(value ? group | 0x80 : group);
  } while (value);
  return out;
}

std::vector<uint64_t> edgeValues() {
  std::vector<uint64_t> values = {0, 1, 0x3f, 0x40, 0x7f, 0x80, ~uint64_t{0}};
  for (unsigned bits = 7; bits < 64; bits += 7) {
    values.push_back((uint64_t{1} << bits) - 1);
    values.push_back(uint64_t{1} << bits);
  }
  std::mt19937_64 random(7);
  for (int i = 0; i < 200; ++i)
    values.push_back(random() >> (random() % 64));
  return values;
}

} // namespace

TEST(Varint, KnownBytesDecode) {
  for (const auto &in : withAndWithoutPadding({0xe5, 0x8e, 0x26})) {
    std::span<const uint8_t> rest = in;
    uint64_t value = 0;
    ASSERT_TRUE(getVarint(rest, value));
    EXPECT_EQ(value, 624485u);
    EXPECT_EQ(rest.size(), in.size() - 3);
  }
}

TEST(Varint, EveryLengthReadsBackAndConsumesItsBytes) {
  for (const uint64_t v : edgeValues()) {
    const std::vector<uint8_t> bytes = leb128(v);
    for (const auto &in : withAndWithoutPadding(bytes)) {
      std::span<const uint8_t> rest = in;
      uint64_t value = 0;
      ASSERT_TRUE(getVarint(rest, value)) << v;
      EXPECT_EQ(value, v);
      EXPECT_EQ(in.size() - rest.size(), bytes.size()) << v;
    }
    std::vector<uint8_t> written(10);
    uint8_t *end = writeVarint(v, written.data());
    EXPECT_EQ(std::vector<uint8_t>(written.data(), end), bytes);
  }
}

TEST(Varint, TruncatedOrTooLongIsRefused) {
  uint64_t value = 0;
  const std::vector<uint8_t> cut = {0x80, 0x80, 0x80};
  std::span<const uint8_t> rest = cut;
  EXPECT_FALSE(getVarint(rest, value));
  // Ten bytes whose last carries more than the 64th bit.
  std::vector<uint8_t> tooLong(9, 0xff);
  tooLong.push_back(0x02);
  for (const auto &in : withAndWithoutPadding(tooLong)) {
    rest = in;
    EXPECT_FALSE(getVarint(rest, value));
  }
}

// A tagged value is one LEB128 number: the payload shifted past the form bit.
TEST(Varint, TaggedValuesReadBackInBothForms) {
  for (const uint64_t payload : edgeValues()) {
    for (const bool xorForm : {false, true}) {
      std::vector<uint8_t> written(10);
      uint8_t *end = writeTagged(payload, xorForm, written.data());
      const std::vector<uint8_t> bytes(written.data(), end);
      if (payload >> 63 == 0) {
        EXPECT_EQ(bytes, leb128(payload << 1 | uint64_t{xorForm})) << payload;
      }
      const size_t bits = 64 - static_cast<size_t>(std::countl_zero(payload)) + 1;
      EXPECT_EQ(bytes.size(), std::max<size_t>(1, (bits + 6) / 7)) << payload;
      for (const auto &in : withAndWithoutPadding(bytes)) {
        std::span<const uint8_t> rest = in;
        uint64_t read = 0;
        bool readXor = !xorForm;
        ASSERT_TRUE(getTagged(rest, read, readXor)) << payload;
        EXPECT_EQ(read, payload);
        EXPECT_EQ(readXor, xorForm);
        EXPECT_EQ(in.size() - rest.size(), bytes.size()) << payload;
      }
    }
  }
}
