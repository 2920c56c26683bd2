// The sampled record coding's two versions (SampleCoder.h): the vector one must write the bytes the
// portable one writes and read any bytes as it does, and both must read back what they wrote.
// DiffCodecTest checks the bytes themselves against a hand-worked stream.
#include "codec/SampleCoder.h"
#include "codec/DiffFormat.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

using namespace strobe;

namespace {

using State = std::array<uint64_t, kSampleStateSlots>;

// Register values with every payload length and both forms: small steps either way, single
// flipped bits, sign changes, all ones, and anything.
uint64_t nextValue(std::mt19937_64 &random, uint64_t previous) {
  switch (random() % 8) {
  case 0:
    return previous; // unchanged
  case 1:
    return previous + 1 - random() % 3;
  case 2:
    return previous ^ uint64_t { 1 } << random() % 64;
  case 3:
    return ~previous;
  case 4:
    return uint64_t{0} - previous;
  case 5:
    return previous + (random() >> (random() % 64));
  default:
    return random();
  }
}

// Records of `count` registers, every one coded in its own slot of the buffer's sequence.
std::vector<std::vector<uint64_t>> randomRecords(unsigned count, size_t records, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::vector<uint64_t>> out;
  std::vector<uint64_t> regs(count, 0);
  for (size_t i = 0; i < records; ++i) {
    for (uint64_t &r : regs)
      r = nextValue(random, r);
    out.push_back(regs);
  }
  return out;
}

std::vector<uint8_t> encodeWith(SampleEncodeFn encode,
                                const std::vector<std::vector<uint64_t>> &records) {
  std::vector<uint8_t> bytes((records.size() + 1) * kSampleRecordBound);
  State state{};
  uint8_t *end = bytes.data();
  for (const std::vector<uint64_t> &regs : records)
    end = encode(regs.data(), state.data(), static_cast<unsigned>(regs.size()), end);
  bytes.resize(static_cast<size_t>(end - bytes.data()));
  return bytes;
}

// Decodes `bytes` with `decode`, expecting exactly `records`.
void expectRecords(SampleDecodeFn decode, const std::vector<uint8_t> &bytes,
                   const std::vector<std::vector<uint64_t>> &records, unsigned count) {
  std::span<const uint8_t> in = bytes;
  State state{}, regs{};
  for (size_t i = 0; i < records.size(); ++i) {
    ASSERT_EQ(decode(in, state.data(), regs.data(), count), nullptr) << "record " << i;
    ASSERT_EQ(std::vector<uint64_t>(regs.begin(), regs.begin() + count), records[i])
        << "record " << i;
  }
  EXPECT_TRUE(in.empty());
}

constexpr unsigned kCounts[] = {1, 3, 7, 8, 9, 21, 34, 56, 63};

TEST(SampleCoder, PortableRoundTripsEveryRegisterCount) {
  for (unsigned count : kCounts) {
    SCOPED_TRACE(std::to_string(count) + " registers");
    const auto records = randomRecords(count, 300, count);
    expectRecords(decodeSamplePortable, encodeWith(encodeSamplePortable, records), records, count);
  }
}

TEST(SampleCoder, EveryCutRecordIsReportedAsTruncated) {
  const auto records = randomRecords(21, 40, 5);
  const std::vector<uint8_t> bytes = encodeWith(encodeSamplePortable, records);
  for (size_t size = 0; size < bytes.size(); ++size) {
    // The cut bytes alone, in a buffer of their size, so AddressSanitizer sees any read past.
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(size));
    std::span<const uint8_t> in = cut;
    State state{}, regs{};
    const char *problem = nullptr;
    size_t decoded = 0;
    while (!problem && decoded < records.size()) {
      problem = decodeSamplePortable(in, state.data(), regs.data(), 21);
      decoded += problem ? 0 : 1;
    }
    ASSERT_NE(problem, nullptr) << "cut to " << size;
    EXPECT_STREQ(problem, "truncated sampled record");
  }
}

TEST(SampleCoder, BitmapPastTheLayoutIsReported) {
  const std::vector<uint8_t> bytes = {0x08, 0x01, 0x05}; // register 3 of 3
  std::span<const uint8_t> in = bytes;
  State state{}, regs{};
  EXPECT_STREQ(decodeSamplePortable(in, state.data(), regs.data(), 3),
               "sampled record names a register past the layout");
}

#if defined(__x86_64__)
class VectorSampleCoder : public ::testing::Test {
protected:
  void SetUp() override {
    if (!avx512SamplesRun())
      GTEST_SKIP() << "this CPU lacks AVX-512 VBMI2";
  }
};

TEST_F(VectorSampleCoder, WritesThePortableBytes) {
  for (unsigned count : kCounts) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(std::to_string(count) + " registers, seed " + std::to_string(seed));
      const auto records = randomRecords(count, 500, seed * 100 + count);
      const std::vector<uint8_t> portable = encodeWith(encodeSamplePortable, records);
      EXPECT_EQ(encodeWith(encodeSampleAvx512, records), portable);
      // And reads them back, the last records of the buffer through its short-input path.
      expectRecords(decodeSampleAvx512, portable, records, count);
    }
  }
}

// Whatever the bytes, the vector decoder reads as much of them, to the same registers, and
// finds the same fault as the portable one.
TEST_F(VectorSampleCoder, ReadsAnyBytesAsThePortableDecoderDoes) {
  std::mt19937_64 random(17);
  for (int round = 0; round < 300; ++round) {
    const unsigned count = kCounts[random() % std::size(kCounts)];
    std::vector<uint8_t> bytes(kSampleRecordBound + random() % 4000);
    for (uint8_t &b : bytes)
      b = static_cast<uint8_t>(random());
    if (round % 2 == 0) // mostly valid bitmaps, which reach the payloads
      for (size_t at = 0; at < bytes.size(); at += 1 + random() % 40)
        bytes[at] &= static_cast<uint8_t>((1u << std::min(count, 8u)) - 1);
    std::span<const uint8_t> portableIn = bytes, vectorIn = bytes;
    State portable{}, vector{}, portableRegs{}, vectorRegs{};
    for (int record = 0;; ++record) {
      SCOPED_TRACE("round " + std::to_string(round) + ", record " + std::to_string(record));
      const char *portableProblem =
          decodeSamplePortable(portableIn, portable.data(), portableRegs.data(), count);
      const char *vectorProblem =
          decodeSampleAvx512(vectorIn, vector.data(), vectorRegs.data(), count);
      ASSERT_EQ(portableProblem == nullptr, vectorProblem == nullptr);
      if (portableProblem) {
        EXPECT_STREQ(vectorProblem, portableProblem);
        break;
      }
      ASSERT_EQ(vectorIn.size(), portableIn.size());
      ASSERT_EQ(vector, portable);
      ASSERT_EQ(vectorRegs, portableRegs);
      if (portableIn.empty())
        break;
    }
  }
}
#endif

} // namespace
