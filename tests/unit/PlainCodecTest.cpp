#include "codec/PlainCodec.h"

#include <gtest/gtest.h>
#include <random>
#include <stdexcept>

using namespace strobe;

namespace {

std::vector<uint8_t> encode(PlainCodec &codec, std::vector<uint64_t> regs) {
  std::vector<uint8_t> out;
  codec.encode(regs, out);
  return out;
}

std::vector<uint64_t> decodeAll(PlainCodec &codec, std::vector<uint8_t> bytes) {
  std::span<const uint8_t> in = bytes;
  std::vector<uint64_t> regs;
  EXPECT_TRUE(codec.decode(in, regs));
  EXPECT_TRUE(in.empty()) << in.size() << " bytes left over";
  return regs;
}

} // namespace

TEST(PlainCodec, NamesItself) {
  PlainCodec codec(3);
  EXPECT_EQ(codec.name(), "plain");
  EXPECT_EQ(codec.version(), 1u);
}

TEST(PlainCodec, EncodesKeyframesAndChangeBitmapsAsDocumented) {
  PlainCodec codec(3);
  EXPECT_EQ(encode(codec, {1, 300, 0}), (std::vector<uint8_t>{0x01, 0xac, 0x02, 0x00}));
  EXPECT_EQ(encode(codec, {1, 301, 0}), (std::vector<uint8_t>{0x02, 0xad, 0x02}));
  EXPECT_EQ(encode(codec, {1, 301, 0}), (std::vector<uint8_t>{0x00}));
  EXPECT_EQ(encode(codec, {2, 301, 5}), (std::vector<uint8_t>{0x05, 0x02, 0x05}));
  codec.reset();
  EXPECT_EQ(encode(codec, {2, 301, 5}), (std::vector<uint8_t>{0x02, 0xad, 0x02, 0x05}));
  EXPECT_EQ(
      encode(codec, {~uint64_t{0}, 301, 5}),
      (std::vector<uint8_t>{0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(PlainCodec, DecodesTheDocumentedBytes) {
  PlainCodec codec(3);
  EXPECT_EQ(decodeAll(codec, {0x01, 0xac, 0x02, 0x00}), (std::vector<uint64_t>{1, 300, 0}));
  EXPECT_EQ(decodeAll(codec, {0x02, 0xad, 0x02}), (std::vector<uint64_t>{1, 301, 0}));
  EXPECT_EQ(decodeAll(codec, {0x00}), (std::vector<uint64_t>{1, 301, 0}));
  EXPECT_EQ(decodeAll(codec, {0x05, 0x02, 0x05}), (std::vector<uint64_t>{2, 301, 5}));
  codec.reset();
  EXPECT_EQ(decodeAll(codec, {0x07, 0x08, 0x09}), (std::vector<uint64_t>{7, 8, 9}));
}

TEST(PlainCodec, DecodesConsecutiveRecordsFromOneBuffer) {
  PlainCodec codec(2);
  const std::vector<uint8_t> bytes = {0x01, 0x02, 0x02, 0x03, 0x00};
  std::span<const uint8_t> in = bytes;
  std::vector<uint64_t> regs;
  ASSERT_TRUE(codec.decode(in, regs));
  EXPECT_EQ(regs, (std::vector<uint64_t>{1, 2}));
  ASSERT_TRUE(codec.decode(in, regs));
  EXPECT_EQ(regs, (std::vector<uint64_t>{1, 3}));
  ASSERT_TRUE(codec.decode(in, regs));
  EXPECT_EQ(regs, (std::vector<uint64_t>{1, 3}));
  EXPECT_TRUE(in.empty());
}

TEST(PlainCodec, RejectsMalformedRecords) {
  std::vector<uint64_t> regs;
  {
    PlainCodec codec(3);
    const std::vector<uint8_t> shortKeyframe = {0x01, 0x02};
    std::span<const uint8_t> in = shortKeyframe;
    EXPECT_FALSE(codec.decode(in, regs));
  }
  {
    PlainCodec codec(3);
    const std::vector<uint8_t> unfinishedVarint = {0x01, 0x02, 0x83};
    std::span<const uint8_t> in = unfinishedVarint;
    EXPECT_FALSE(codec.decode(in, regs));
  }
  {
    PlainCodec codec(3);
    const std::vector<uint8_t> bytes = {0x01, 0x02, 0x03, 0x08, 0x01}; // bit 3: no such register
    std::span<const uint8_t> in = bytes;
    ASSERT_TRUE(codec.decode(in, regs));
    EXPECT_FALSE(codec.decode(in, regs));
  }
  {
    PlainCodec codec(1);
    const std::vector<uint8_t> tooLong = {0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0x02}; // 65 bits
    std::span<const uint8_t> in = tooLong;
    EXPECT_FALSE(codec.decode(in, regs));
  }
}

TEST(PlainCodec, RejectsWrongSizes) {
  EXPECT_THROW(PlainCodec(65), std::invalid_argument);
  PlainCodec codec(3);
  std::vector<uint8_t> out;
  EXPECT_THROW(codec.encode(std::vector<uint64_t>{1, 2}, out), std::invalid_argument);
}

TEST(PlainCodec, UnchangedRecordIsOneZeroByte) {
  PlainCodec codec(64);
  std::vector<uint64_t> regs(64, 0x7fff12345678);
  encode(codec, regs);
  EXPECT_EQ(encode(codec, regs), (std::vector<uint8_t>{0x00}));
}

// Random register streams of every shape a sampler produces round-trip, with keyframes at
// irregular points on both sides.
TEST(PlainCodec, RandomStreamsRoundTrip) {
  std::mt19937_64 random(20240601);
  for (size_t count : {1, 3, 21, 34, 63, 64}) {
    std::vector<std::vector<uint64_t>> records;
    std::vector<uint64_t> regs(count);
    for (uint64_t &r : regs)
      r = random();
    for (int i = 0; i < 2000; ++i) {
      switch (random() % 4) {
      case 0: // none changing
        break;
      case 1: // 0 / +1 / -1 deltas
        for (uint64_t &r : regs)
          r += static_cast<uint64_t>(static_cast<int64_t>(random() % 3) - 1);
        break;
      case 2: // all changing
        for (uint64_t &r : regs)
          r = random();
        break;
      case 3: // a few changing, some to extreme values
        for (int k = 0; k < 3; ++k)
          regs[random() % count] = (random() % 2) ? ~uint64_t{0} : 0;
        break;
      }
      records.push_back(regs);
    }
    std::vector<size_t> keyframes;
    for (size_t i = 0; i < records.size(); ++i)
      if (random() % 50 == 0)
        keyframes.push_back(i);

    PlainCodec encoder(count);
    std::vector<uint8_t> bytes;
    for (size_t i = 0, k = 0; i < records.size(); ++i) {
      if (k < keyframes.size() && keyframes[k] == i) {
        encoder.reset();
        ++k;
      }
      encoder.encode(records[i], bytes);
    }

    PlainCodec decoder(count);
    std::span<const uint8_t> in = bytes;
    std::vector<uint64_t> decoded;
    for (size_t i = 0, k = 0; i < records.size(); ++i) {
      if (k < keyframes.size() && keyframes[k] == i) {
        decoder.reset();
        ++k;
      }
      ASSERT_TRUE(decoder.decode(in, decoded)) << "count " << count << " record " << i;
      ASSERT_EQ(decoded, records[i]) << "count " << count << " record " << i;
    }
    EXPECT_TRUE(in.empty());
  }
}
