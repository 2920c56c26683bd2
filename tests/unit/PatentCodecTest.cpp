// Spec 001's example machine: Fig. 5's five instructions must give exactly the golden 462-bit
// stream, and the prior-art tagged format 627 bits.
#include "codec/PatentCodec.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace strobe;

namespace {

constexpr uint32_t kInitialPc = 1000;

// Fig. 5 (decimal): registers accumulate from all-zero.
std::vector<PatentStop> figure5() {
  std::vector<PatentStop> stops(5);
  PatentStop s;
  s.regs[2] = 444;
  s.regs[8] = 666;
  s.word = 10;
  s.wordBits = 16;
  s.pc = 1002;
  s.memory[0] = PatentMemoryAccess{120, 888};
  stops[0] = s;
  s.regs[15] = 135;
  s.word = 456;
  s.wordBits = 32;
  s.pc = 1006;
  s.memory = {std::nullopt, PatentMemoryAccess{480, 1010}};
  stops[1] = s;
  s.regs[7] = 124;
  s.word = 789;
  s.pc = 1010;
  s.memory = {};
  stops[2] = s;
  s.regs[7] = 248;
  s.pc = 1014;
  stops[3] = s;
  s.word = 20;
  s.wordBits = 16;
  s.pc = 2000;
  stops[4] = s;
  return stops;
}

// The golden stream as printed in the spec.
std::vector<uint8_t> goldenBytes() {
  const std::string hex = "2080c8000006f000000a68002800000de00006c00000087000001c8000003f201009"
                          "0000001f000000c5404004000000f800009c005000001f40";
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < hex.size(); i += 2)
    bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

// The example program: where each word sits, and which addresses its fields designate.
PatentMachine exampleMachine() {
  PatentMachine machine;
  machine.wordBitsAt = [](uint32_t pc) {
    static const std::map<uint32_t, unsigned> program = {
        {1000, 16}, {1002, 32}, {1006, 32}, {1010, 32}, {1014, 16}};
    auto it = program.find(pc);
    return it == program.end() ? 0u : it->second;
  };
  machine.addresses = [](uint32_t word, const std::array<uint32_t, kPatentRegisters> &) {
    return word == 10 ? std::array<uint32_t, 2>{120, 0} : std::array<uint32_t, 2>{0, 480};
  };
  return machine;
}

std::string bitString(const std::vector<uint8_t> &bytes, size_t from, size_t count) {
  std::string bits;
  for (size_t i = from; i < from + count; ++i)
    bits += ((bytes[i / 8] >> (7 - i % 8)) & 1) ? '1' : '0';
  return bits;
}

} // namespace

TEST(PatentCodec, Figure5GivesTheGoldenStream) {
  PatentEncoder encoder(kInitialPc);
  std::vector<size_t> bits;
  for (const PatentStop &stop : figure5())
    bits.push_back(encoder.encode(stop));
  EXPECT_EQ(bits, (std::vector<size_t>{134, 118, 86, 54, 70}));
  EXPECT_EQ(encoder.bits(), 462u);
  EXPECT_EQ(encoder.bytes().size(), 58u);
  EXPECT_EQ(encoder.bytes(), goldenBytes());
}

TEST(PatentCodec, RecordsStartWithTheSpecsBitmaps) {
  PatentEncoder encoder(kInitialPc);
  std::vector<size_t> starts;
  for (const PatentStop &stop : figure5()) {
    starts.push_back(encoder.bits());
    encoder.encode(stop);
  }
  const std::vector<std::string> bitmaps = {"0010000010000000"
                                            "1"
                                            "10"
                                            "010",
                                            "0000000000000001"
                                            "1"
                                            "01"
                                            "100",
                                            "0000000100000000"
                                            "1"
                                            "00"
                                            "100",
                                            "0000000100000000"
                                            "0"
                                            "00"
                                            "100",
                                            "0000000000000000"
                                            "1"
                                            "00"
                                            "111"};
  for (size_t i = 0; i < bitmaps.size(); ++i)
    EXPECT_EQ(bitString(encoder.bytes(), starts[i], 22), bitmaps[i]) << "instruction " << i + 1;
}

TEST(PatentCodec, GoldenStreamDecodesToFigure5) {
  const PatentDecoded decoded =
      decodePatentStream(goldenBytes(), 462, exampleMachine(), kInitialPc);
  EXPECT_TRUE(decoded.complete);
  EXPECT_EQ(decoded.stops, figure5());
}

TEST(PatentCodec, PaddingToTheByteDecodesTheSame) {
  const PatentDecoded decoded =
      decodePatentStream(goldenBytes(), goldenBytes().size() * 8, exampleMachine(), kInitialPc);
  EXPECT_TRUE(decoded.complete);
  EXPECT_EQ(decoded.stops.size(), 5u);
}

TEST(PatentCodec, PriorArtNeedsTheSpecsBitCounts) {
  const std::vector<PatentStop> stops = figure5();
  const std::vector<size_t> perInstruction = {202, 179, 112, 77, 57};
  size_t total = 0;
  for (size_t n = 1; n <= stops.size(); ++n) {
    total += perInstruction[n - 1];
    EXPECT_EQ(priorArtBits(std::span(stops).first(n), kInitialPc), total) << n << " instructions";
  }
  EXPECT_EQ(total, 627u);
}

// Without markers, one lost bit loses everything after it: a cut stream keeps the records
// before the cut and says it is incomplete.
TEST(PatentCodec, CutStreamKeepsTheWholeRecordsBeforeTheCut) {
  const std::vector<PatentStop> all = figure5();
  const size_t recordEnds[] = {134, 252, 338, 392, 462};
  for (size_t cut = 0; cut < 462; ++cut) {
    const PatentDecoded decoded =
        decodePatentStream(goldenBytes(), cut, exampleMachine(), kInitialPc);
    size_t whole = 0;
    while (whole < 5 && recordEnds[whole] <= cut)
      ++whole;
    EXPECT_EQ(decoded.stops, std::vector<PatentStop>(all.begin(), all.begin() + whole)) << cut;
    // Fewer than 8 zero bits after the last record could be byte padding; more cannot.
    const size_t lastEnd = whole ? recordEnds[whole - 1] : 0;
    if (cut == lastEnd) {
      EXPECT_TRUE(decoded.complete) << cut;
    } else if (cut - lastEnd >= 8) {
      EXPECT_FALSE(decoded.complete) << cut;
    }
  }
}

TEST(PatentCodec, InvalidPcCodeStopsDecoding) {
  std::vector<uint8_t> bytes = goldenBytes();
  bytes[2] ^= 0x08; // instruction 1's IL 010 becomes 000 (bits 19-21 are in byte 2)
  const PatentDecoded decoded = decodePatentStream(bytes, 462, exampleMachine(), kInitialPc);
  EXPECT_FALSE(decoded.complete);
  EXPECT_TRUE(decoded.stops.empty());
}

TEST(PatentCodec, RejectsWordsThatDoNotFitTheirLength) {
  PatentEncoder encoder(kInitialPc);
  PatentStop stop;
  stop.word = 0x12345;
  stop.wordBits = 16;
  EXPECT_THROW(encoder.encode(stop), std::invalid_argument);
  stop.wordBits = 24;
  EXPECT_THROW(encoder.encode(stop), std::invalid_argument);
  EXPECT_EQ(encoder.bits(), 0u);
}
