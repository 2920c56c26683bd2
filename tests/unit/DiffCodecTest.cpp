// The production diff-record codec: a stream worked out by hand from the format in DiffFormat.h,
// random record sequences that must round-trip exactly, and damaged streams that must be
// reported and resynchronised at the next keyframe.
#include "codec/DiffDecoder.h"
#include "codec/DiffEncoder.h"
#include "codec/SampleCoder.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <zlib.h>

using namespace strobe;

namespace {

// A memory operand model the tests control, deterministic like the real one. The first
// instruction byte says what the instruction accesses: 0xee nothing predictable, else bits 0-1
// the number of slots (0-3) and bits 2-4 the size pattern; slot k is at a register (chosen by the
// second byte) + 8k + pc % 7, computed from the registers before the instruction ran.
class FakeModel : public MemoryOperandModel {
public:
  explicit FakeModel(unsigned mainCount) : mainCount_(mainCount) {}

  bool predict(std::span<const uint8_t> bytes, uint64_t pc, std::span<const uint64_t> regs,
               MemorySlots &out) override {
    out.clear();
    return shape(bytes, pc, [&](const AccessFormula &f) { return out.add(f.slot(regs)); });
  }
  // The same slots as formulas (three do not fit).
  bool formulas(std::span<const uint8_t> bytes, uint64_t pc, AccessFormulas &out) override {
    out.clear();
    return shape(bytes, pc, [&](const AccessFormula &f) { return out.add(f); });
  }

private:
  // Calls add(formula) for each slot while it returns true; false if unpredictable or one did
  // not fit.
  template <typename Add> bool shape(std::span<const uint8_t> bytes, uint64_t pc, Add add) const {
    if (bytes.empty() || bytes[0] == 0xee)
      return false;
    static constexpr uint32_t kSizes[] = {1, 2, 4, 8, 16, 10};
    for (unsigned k = 0; k < (bytes[0] & 3u); ++k) {
      AccessFormula f;
      f.base = static_cast<uint8_t>(((bytes.size() > 1 ? bytes[1] : 0) + k) % mainCount_);
      f.displacement = 8 * k + pc % 7;
      f.size = kSizes[((bytes[0] >> 2) + k) % 6];
      f.read = k % 3 != 1;
      f.write = k % 3 != 0;
      if (!add(f))
        return false;
    }
    return true;
  }

  unsigned mainCount_;
};

// The same model for a codec that cannot keep its answers: every record with memory asks it.
class FakeModelWithoutFormulas : public FakeModel {
public:
  using FakeModel::FakeModel;
  bool formulas(std::span<const uint8_t>, uint64_t, AccessFormulas &out) override {
    out.clear();
    return false;
  }
};

std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto &part : parts)
    out.insert(out.end(), part.begin(), part.end());
  return out;
}

std::vector<uint8_t> le32(uint32_t value) {
  return {static_cast<uint8_t>(value), static_cast<uint8_t>(value >> 8),
          static_cast<uint8_t>(value >> 16), static_cast<uint8_t>(value >> 24)};
}

std::vector<uint8_t> le64(uint64_t value) {
  std::vector<uint8_t> bytes(8);
  for (unsigned k = 0; k < 8; ++k)
    bytes[k] = static_cast<uint8_t>(value >> (8 * k));
  return bytes;
}

uint32_t zlibCrc(const std::vector<uint8_t> &bytes) {
  return static_cast<uint32_t>(crc32(0, bytes.data(), static_cast<uInt>(bytes.size())));
}

void expectSameRecords(const std::vector<TraceRecord> &expected,
                       const std::vector<TraceRecord> &got) {
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == got[i])
      continue;
    EXPECT_EQ(expected[i].regs, got[i].regs) << "record " << i;
    EXPECT_EQ(expected[i].ext, got[i].ext) << "record " << i;
    EXPECT_EQ(expected[i].instruction, got[i].instruction) << "record " << i;
    EXPECT_EQ(expected[i].memory.size(), got[i].memory.size()) << "record " << i;
    EXPECT_EQ(expected[i].memory, got[i].memory) << "record " << i;
    EXPECT_EQ(expected[i].gap, got[i].gap) << "record " << i;
    return;
  }
}

std::vector<uint8_t> encodeAll(const StreamLayout &layout, const EncoderOptions &options,
                               MemoryOperandModel *model, const std::vector<TraceRecord> &records) {
  DiffEncoder encoder(layout, options, model, model ? "fake" : "");
  for (const TraceRecord &r : records)
    encoder.encode(r);
  return encoder.finish();
}

// --- a hand-worked stream ---

// Three registers (pc last), a two-instruction loop at 0x1000 (nop) and 0x1001 (jmp back).
std::vector<TraceRecord> tinyLoop() {
  const std::vector<uint8_t> nop = {0x90}, jmp = {0xeb, 0xfd};
  MemoryAccess load{0x2000, 4, true, false, {9, 0, 0, 0}, {}};
  return {
      {{5, 0x100, 0x1000}, {}, nop, {}, false},     {{6, 0x100, 0x1001}, {}, nop, {}, false},
      {{6, 0x100, 0x1000}, {}, jmp, {}, false},     {{7, 0x100, 0x1001}, {}, nop, {}, false},
      {{7, 0x100, 0x1000}, {}, jmp, {}, false},     {{9, 0x100, 0x1001}, {}, nop, {}, false},
      {{9, 0x100, 0x1000}, {}, jmp, {load}, false},
  };
}

const StreamLayout kTiny{Isa::X86_64, 3, 2, 0};

// A stream of one block, its header and block framing worked out by hand.
std::vector<uint8_t> tinyStream(const std::vector<uint8_t> &header, uint8_t records,
                                const std::vector<uint8_t> &payload) {
  const std::vector<uint8_t> fields =
      concat({{0x00, records}, {static_cast<uint8_t>(payload.size())}});
  return concat({header,
                 le32(zlibCrc(header)),
                 {0x9e, 0x51, 0xd1, 0xf5},
                 fields,
                 le32(zlibCrc(concat({fields, payload}))),
                 payload});
}

TEST(DiffCodec, TinyLoopEncodesToTheDocumentedBytes) {
  const std::vector<uint8_t> header = concat({{'S', 'D', 'I', 'F'},
                                              {0x03, 0x01},       // version, isa x86-64
                                              {0x03, 0x02, 0x00}, // 3 main slots, pc 2, no ext
                                              {0x10, 0x02},       // interval 16, 2 bits
                                              {0x00, 0x00}});     // stepped coding, no model
  const std::vector<uint8_t> payload = {
      // keyframe: pc 0x1000, r0 5, r1 0x100, 1 instruction byte 90, no accesses
      0x80, 0x20, 0x05, 0x80, 0x02, 0x01, 0x90, 0x00,
      // nothing remembered at 0x1000: explicit set {r0}, bytes follow, pc = fall-through;
      // r0 5 -> 6 arithmetic +1: zigzag 2, tagged 2 << 1
      0x18, 0x01, 0x90, 0x01, 0x04,
      // at 0x1001 (new): nothing changed, as "predicted"; bytes eb fd; pc delta -1 (zigzag 1)
      0x13, 0x02, 0xeb, 0xfd, 0x01,
      // at 0x1000 again: r0 +1 and pc as last time
      0x00,
      // at 0x1001 again: as last time
      0x00,
      // at 0x1000: r0 7 -> 9 deviates from the predicted 8 by +1; it is the only predicted
      // member, so "all deviate" (0x40) replaces the bitmap; tagged zigzag 2
      0x44, 0x04,
      // at 0x1001: as predicted, plus memory: no slots, 1 escape at +0x2000 (zigzag 0x4000),
      // 4 bytes, read, value = this record's slot 0 (r0 = 9): source code 1
      0x20, 0x01, 0x01, 0x80, 0x80, 0x01, 0x04, 0x01, 0x01};
  const std::vector<uint8_t> expected = tinyStream(header, 7, payload);

  const EncoderOptions options{16, 2, 0};
  EXPECT_EQ(encodeAll(kTiny, options, nullptr, tinyLoop()), expected);
  const DecodedStream decoded = decodeStream(expected);
  EXPECT_TRUE(decoded.report.clean());
  expectSameRecords(tinyLoop(), decoded.records);

  // Version 1, which strobe wrote before sampled coding, had no coding field: still read.
  const std::vector<uint8_t> version1 = tinyStream(
      concat({{'S', 'D', 'I', 'F', 0x01, 0x01, 0x03, 0x02, 0x00, 0x10, 0x02, 0x00}}), 7, payload);
  const DecodedStream old = decodeStream(version1);
  EXPECT_TRUE(old.report.clean());
  ASSERT_TRUE(old.report.header);
  EXPECT_EQ(old.report.header->version, 1u);
  EXPECT_EQ(old.report.header->coding, RecordCoding::Stepped);
  expectSameRecords(tinyLoop(), old.records);
}

// Register samples, sampled coding: each record a bitmap of the changed registers, their
// nibbles (bit 0 XOR form, bits 1-3 bytes - 1), then their payloads.
std::vector<TraceRecord> tinySamples() {
  return {{{1, 2, 0x5000}, {}, {}, {}, false},
          {{1, 3, 0x5400}, {}, {}, {}, false},
          {{~uint64_t{0}, 0x8000000000000003, 0x53fc}, {}, {}, {}, false},
          {{~uint64_t{0}, 0x8000000000000003, 0x53fc}, {}, {}, {}, false}};
}

const std::vector<uint8_t> kTinySamplesPayload = {
    // against zeros: all three change; 1 and 2 as XOR (smaller than zigzag 2 and 4), 1 byte
    // each: nibbles 1, 1; 0x5000 as XOR in 2 bytes: nibble 3
    0x07, 0x11, 0x03, 0x01, 0x02, 0x00, 0x50,
    // r1 2 -> 3 (XOR 1 < zigzag 2), pc 0x5000 -> 0x5400 (XOR 0x400 < zigzag 0x800, 2 bytes)
    0x06, 0x31, 0x01, 0x00, 0x04,
    // r0 1 -> -1: zigzag(-2) = 3, arithmetic, 1 byte: nibble 0; r1 +2^63: XOR 2^63 in 8 bytes
    // (its zigzag is all ones): nibble 0xf; pc -4: zigzag 7 (XOR 0x7fc): nibble 0
    0x07, 0xf0, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x07,
    // nothing changed
    0x00};

TEST(DiffCodec, TinySamplesEncodeToTheDocumentedBytes) {
  const std::vector<uint8_t> header = concat({{'S', 'D', 'I', 'F'},
                                              {0x03, 0x01},       // version, isa x86-64
                                              {0x03, 0x02, 0x00}, // 3 main slots, pc 2, no ext
                                              {0x10, 0x00},       // interval 16, no table
                                              {0x01, 0x00}});     // sampled coding, no model
  const std::vector<uint8_t> expected = tinyStream(header, 4, kTinySamplesPayload);
  const EncoderOptions options{16, 0, 0, RecordCoding::Sampled};
  EXPECT_EQ(encodeAll(kTiny, options, nullptr, tinySamples()), expected);
  const DecodedStream decoded = decodeStream(expected);
  EXPECT_TRUE(decoded.report.clean());
  expectSameRecords(tinySamples(), decoded.records);
}

// Both versions of the sampled coder, whichever the CPU runs, write those bytes.
TEST(DiffCodec, EverySampleCoderWritesTheDocumentedBytes) {
  std::vector<std::pair<const char *, SampleCoder>> coders = {
      {"portable", {encodeSamplePortable, decodeSamplePortable}}};
#if defined(__x86_64__)
  if (avx512SamplesRun())
    coders.push_back({"AVX-512", {encodeSampleAvx512, decodeSampleAvx512}});
#endif
  for (const auto &[name, coder] : coders) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> bytes(4 * kSampleRecordBound);
    uint64_t state[kSampleStateSlots] = {};
    uint8_t *end = bytes.data();
    for (const TraceRecord &r : tinySamples())
      end = coder.encode(r.regs.data(), state, 3, end);
    bytes.resize(static_cast<size_t>(end - bytes.data()));
    EXPECT_EQ(bytes, kTinySamplesPayload);
  }
}

TEST(DiffCodec, SampleRecordsCarryNoInstructionBytes) {
  const std::vector<TraceRecord> samples = {{{1, 2, 0x5000}, {}, {}, {}, false},
                                            {{1, 3, 0x5400}, {}, {}, {}, false}};
  const std::vector<uint8_t> stream = encodeAll(kTiny, {16, 2, 0}, nullptr, samples);
  // Second record: pc delta +0x400 (zigzag 0x800), explicit {r1}, r1 2 -> 3: XOR 1, smaller
  // than the arithmetic zigzag(+1) = 2, so tagged 1 << 1 | XOR.
  const std::vector<uint8_t> tail = {0x0b, 0x80, 0x10, 0x02, 0x03};
  ASSERT_GT(stream.size(), tail.size());
  EXPECT_EQ(std::vector<uint8_t>(stream.end() - 5, stream.end()), tail);
  expectSameRecords(samples, decodeStream(stream).records);
}

TEST(DiffCodec, HeaderRoundTripsItsFields) {
  const StreamLayout layout = layoutFor(Isa::AArch64, true);
  EXPECT_EQ(layout.mainCount, 34u);
  EXPECT_EQ(layout.pcIndex, 32u);
  EXPECT_EQ(layout.extSlots, 67u); // v0-v31 two slots each, fpsr, fpcr, tpidr
  DiffEncoder encoder(layout, {100, 7, 3}, nullptr, "capstone");
  const DecodeReport report = DiffDecoder().decode(encoder.finish(), [](const TraceRecord &) {});
  ASSERT_TRUE(report.header);
  EXPECT_EQ(report.header->layout, layout);
  EXPECT_EQ(report.header->keyframeInterval, 100u);
  EXPECT_EQ(report.header->historyBits, 7u);
  EXPECT_EQ(report.header->memoryModel, "capstone");
  EXPECT_EQ(report.header->coding, RecordCoding::Stepped);
  EXPECT_EQ(report.records, 0u);

  const StreamLayout main = layoutFor(Isa::X86_64, false);
  DiffEncoder samples(main, {4096, 0, 1, RecordCoding::Sampled});
  const DecodeReport sampled = DiffDecoder().decode(samples.finish(), [](const TraceRecord &) {});
  ASSERT_TRUE(sampled.header);
  EXPECT_EQ(sampled.header->coding, RecordCoding::Sampled);
  EXPECT_EQ(sampled.header->layout, main);
}

TEST(DiffCodec, HeaderOfAnUnknownCodingIsRejected) {
  for (const auto &[coding, ext, reason] :
       {std::tuple{uint8_t{2}, uint8_t{0}, "unknown record coding 2"},
        std::tuple{uint8_t{1}, uint8_t{4}, "sampled records with extended state"}}) {
    const std::vector<uint8_t> header =
        concat({{'S', 'D', 'I', 'F', 0x02, 0x01, 0x03, 0x02, ext, 0x10, 0x00, coding, 0x00}});
    std::vector<uint8_t> bytes = concat({header, le32(zlibCrc(header))});
    std::span<const uint8_t> in = bytes;
    StreamHeader parsed;
    EXPECT_EQ(readStreamHeader(in, parsed), std::optional<std::string>(reason));
  }
}

TEST(DiffCodec, EncoderRejectsRecordsThatDoNotFit) {
  DiffEncoder encoder(kTiny, {}, nullptr);
  const size_t empty = encoder.size();
  TraceRecord record{{1, 2, 3}, {}, {}, {}, false};
  EXPECT_THROW(encoder.encode({{1, 2}, {}, {}, {}, false}), std::invalid_argument);
  EXPECT_THROW(encoder.encode({{1, 2, 3}, {4}, {}, {}, false}), std::invalid_argument);
  record.memory = {{0x10, 4, true, false, {1, 2}, {}}}; // 2 value bytes for a 4-byte read
  EXPECT_THROW(encoder.encode(record), std::invalid_argument);
  record.memory = {{0x10, 4, false, false, {}, {}}}; // neither read nor write
  EXPECT_THROW(encoder.encode(record), std::invalid_argument);
  record.instruction.assign(kMaxInstructionBytes + 1, 0x90);
  record.memory.clear();
  EXPECT_THROW(encoder.encode(record), std::invalid_argument);
  EXPECT_EQ(encoder.size(), empty);
  EXPECT_EQ(encoder.records(), 0u);
  EXPECT_THROW(DiffEncoder(StreamLayout{Isa::X86_64, 64, 0, 0}), std::invalid_argument);
  EXPECT_THROW(DiffEncoder(StreamLayout{Isa::X86_64, 4, 4, 0}), std::invalid_argument);
  EXPECT_THROW(DiffEncoder(kTiny, {0, 12, 1}), std::invalid_argument);

  // A sampled stream holds registers only.
  const EncoderOptions sampled{16, 0, 0, RecordCoding::Sampled};
  EXPECT_THROW(DiffEncoder(StreamLayout{Isa::X86_64, 3, 2, 2}, sampled), std::invalid_argument);
  DiffEncoder samples(kTiny, sampled);
  const size_t none = samples.size();
  EXPECT_THROW(samples.encode({{1, 2, 3}, {}, {0x90}, {}, false}), std::invalid_argument);
  EXPECT_THROW(samples.encode({{1, 2, 3}, {}, {}, {{0x10, 1, true, false, {1}, {}}}, false}),
               std::invalid_argument);
  EXPECT_EQ(samples.size(), none);
  samples.encode({{1, 2, 3}, {}, {}, {}, false});
  EXPECT_EQ(samples.records(), 1u);
}

// --- random sequences ---

// Records of a program that loops over a few instructions with steady strides, as real traces
// do, broken by random jumps, random register values, rep-style repeats and gaps.
class TraceGenerator {
public:
  TraceGenerator(const StreamLayout &layout, uint64_t seed, bool memory)
      : layout_(layout), random_(seed), memory_(memory), model_(layout.mainCount) {
    const unsigned count = 2 + pick(8);
    uint64_t pc = 0x400000 + pick(0x1000);
    for (unsigned i = 0; i < count; ++i) {
      Instruction insn;
      const size_t length = layout.isa == Isa::AArch64 ? 4 : 1 + pick(15);
      for (size_t k = 0; k < length; ++k)
        insn.bytes.push_back(static_cast<uint8_t>(random_()));
      if (pick(6) == 0)
        insn.bytes[0] = 0xee; // unpredictable memory
      for (unsigned r = 0; r < 1 + pick(3); ++r) {
        const unsigned slot = pickSlot();
        insn.strides[slot] = smallDelta();
      }
      program_[pc] = insn;
      order_.push_back(pc);
      pc += insn.bytes.size();
    }
    current_.regs.resize(layout.mainCount);
    for (uint64_t &v : current_.regs)
      v = value();
    current_.ext.resize(layout.extSlots);
    for (uint64_t &v : current_.ext)
      v = value();
    current_.regs[layout.pcIndex] = order_[0];
  }

  std::vector<TraceRecord> records(size_t count) {
    std::vector<TraceRecord> out;
    out.push_back(current_);
    while (out.size() < count)
      out.push_back(next());
    return out;
  }

private:
  struct Instruction {
    std::vector<uint8_t> bytes;
    std::map<unsigned, uint64_t> strides; // slot -> delta per execution
  };

  uint64_t pick(uint64_t n) { return random_() % n; }
  unsigned pickSlot() {
    unsigned slot;
    do
      slot = static_cast<unsigned>(pick(layout_.slots()));
    while (slot == layout_.pcIndex);
    return slot;
  }
  uint64_t smallDelta() {
    static constexpr int64_t kDeltas[] = {1, -1, 8, -8, 16, 4096, 3};
    return static_cast<uint64_t>(kDeltas[pick(7)]);
  }
  uint64_t value() {
    switch (pick(6)) {
    case 0:
      return 0;
    case 1:
      return ~uint64_t{0};
    case 2:
      return pick(256);
    case 3:
      return 0x7ffc00000000 + pick(1 << 20);
    default:
      return random_();
    }
  }
  uint64_t &slot(TraceRecord &r, unsigned s) const {
    return s < layout_.mainCount ? r.regs[s] : r.ext[s - layout_.mainCount];
  }
  uint64_t slotValue(const TraceRecord &r, unsigned s) const {
    return s < layout_.mainCount ? r.regs[s] : r.ext[s - layout_.mainCount];
  }

  TraceRecord next() {
    TraceRecord prev = current_;
    TraceRecord cur = prev;
    cur.gap = pick(200) == 0;
    const uint64_t pcBefore = prev.regs[layout_.pcIndex];
    auto it = program_.find(pcBefore);
    if (it != program_.end()) {
      cur.instruction = it->second.bytes;
    } else {
      cur.instruction.resize(pick(16));
      for (uint8_t &b : cur.instruction)
        b = static_cast<uint8_t>(random_());
    }
    // Registers: the instruction's strides, mostly; sometimes anything.
    if (it != program_.end() && pick(10) < 8) {
      for (const auto &[s, stride] : it->second.strides)
        slot(cur, s) += pick(10) == 0 ? smallDelta() : stride;
    }
    switch (pick(12)) {
    case 0: // every register changes
      for (unsigned s = 0; s < layout_.slots(); ++s)
        if (s != layout_.pcIndex)
          slot(cur, s) = value();
      break;
    case 1: // nothing changes
      cur.regs = prev.regs;
      cur.ext = prev.ext;
      break;
    case 2:
    case 3:
      for (unsigned n = 1 + static_cast<unsigned>(pick(4)); n > 0; --n) {
        const unsigned s = pickSlot();
        slot(cur, s) = pick(2) ? value() : slot(cur, s) ^ (uint64_t{1} << pick(64));
      }
      break;
    default:
      break;
    }
    // Control flow: around the loop, with random jumps and repeats.
    uint64_t pc;
    const uint64_t roll = pick(40);
    if (roll == 0)
      pc = random_();
    else if (roll == 1)
      pc = pcBefore; // rep iteration
    else if (it == program_.end())
      pc = order_[pick(order_.size())];
    else {
      auto after = std::next(it);
      pc = after == program_.end() ? order_[0] : after->first;
    }
    cur.regs[layout_.pcIndex] = pc;
    cur.memory.clear();
    if (memory_)
      addMemory(prev, cur);
    current_ = cur;
    return cur;
  }

  std::vector<uint8_t> memoryValue(const TraceRecord &from, uint32_t size) {
    std::vector<uint8_t> bytes(size);
    const unsigned spanned = (size + 7) / 8;
    if (pick(2) == 0 && size <= 16 && spanned <= layout_.slots()) {
      // A value that sits in registers, as loads and stores have.
      const unsigned first = static_cast<unsigned>(pick(layout_.slots() - spanned + 1));
      for (uint32_t k = 0; k < size; ++k)
        bytes[k] = static_cast<uint8_t>(slotValue(from, first + k / 8) >> (8 * (k % 8)));
    } else {
      for (uint8_t &b : bytes)
        b = static_cast<uint8_t>(random_());
    }
    return bytes;
  }

  void addMemory(const TraceRecord &prev, TraceRecord &cur) {
    std::vector<uint64_t> before = prev.regs;
    before.insert(before.end(), prev.ext.begin(), prev.ext.end());
    auto slots = model_.slots(cur.instruction, prev.regs[layout_.pcIndex], before);
    if (slots && pick(5) != 0) {
      const size_t used = pick(4) == 0 ? pick(slots->size() + 1) : slots->size();
      for (size_t k = 0; k < used; ++k) {
        const MemorySlot &s = (*slots)[k];
        MemoryAccess a{s.address, s.size, s.read, s.write, {}, {}};
        if (a.read)
          a.readValue = memoryValue(pick(2) ? cur : prev, a.size);
        if (a.write)
          a.writtenValue = memoryValue(pick(2) ? cur : prev, a.size);
        cur.memory.push_back(std::move(a));
      }
    }
    if (pick(5) == 0) { // what no model predicts: rep movs, xsave, gathers
      MemoryAccess a{random_(), static_cast<uint32_t>(1 + pick(40)), pick(2) == 0, false, {}, {}};
      a.write = !a.read || pick(2) == 0;
      if (a.read)
        a.readValue = memoryValue(prev, a.size);
      if (a.write)
        a.writtenValue = memoryValue(cur, a.size);
      cur.memory.push_back(std::move(a));
    }
  }

  StreamLayout layout_;
  std::mt19937_64 random_;
  bool memory_;
  FakeModel model_;
  std::map<uint64_t, Instruction> program_;
  std::vector<uint64_t> order_;
  TraceRecord current_;
};

struct RoundTripCase {
  const char *name;
  Isa isa;
  bool ext;
  bool memory;
  EncoderOptions options;
};

class DiffCodecRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

// The generator's records as samples: registers only.
std::vector<TraceRecord> asSamples(std::vector<TraceRecord> records) {
  for (TraceRecord &r : records)
    r.instruction.clear();
  return records;
}

TEST_P(DiffCodecRoundTrip, RandomSequencesDecodeExactly) {
  const RoundTripCase c = GetParam();
  const StreamLayout layout = layoutFor(c.isa, c.ext);
  FakeModel encoderModel(layout.mainCount), decoderModel(layout.mainCount);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<TraceRecord> records = TraceGenerator(layout, seed, c.memory).records(1000);
    if (c.options.coding == RecordCoding::Sampled)
      records = asSamples(std::move(records));
    const std::vector<uint8_t> stream = encodeAll(layout, c.options, &encoderModel, records);
    const DecodedStream decoded = decodeStream(stream, &decoderModel);
    EXPECT_TRUE(decoded.report.clean());
    expectSameRecords(records, decoded.records);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, DiffCodecRoundTrip,
    ::testing::Values(
        RoundTripCase{"X86Registers", Isa::X86_64, false, false, {}},
        RoundTripCase{"X86Everything", Isa::X86_64, true, true, {}},
        RoundTripCase{"AArch64Memory", Isa::AArch64, false, true, {}},
        RoundTripCase{"AArch64Everything", Isa::AArch64, true, true, {}},
        RoundTripCase{"AllKeyframes", Isa::X86_64, true, true, {1, 12, 1}},
        RoundTripCase{"OneEntryTableRaw", Isa::X86_64, true, true, {7, 0, 0}},
        RoundTripCase{"CollidingPcs", Isa::AArch64, true, true, {300, 3, 9}},
        RoundTripCase{"LargestTable", Isa::X86_64, false, true, {4096, 16, 6}},
        RoundTripCase{"X86Samples", Isa::X86_64, false, false, {4096, 0, 1, RecordCoding::Sampled}},
        RoundTripCase{"AArch64SamplesShortBlocks",
                      Isa::AArch64,
                      false,
                      false,
                      {7, 0, 0, RecordCoding::Sampled}}),
    [](const ::testing::TestParamInfo<RoundTripCase> &info) { return info.param.name; });

// The memory model is only asked when a record has memory; without one every access is stored
// in escape form and still comes back.
TEST(DiffCodec, MemoryWithoutAModelUsesEscapes) {
  const StreamLayout layout = layoutFor(Isa::X86_64, false);
  const std::vector<TraceRecord> records = TraceGenerator(layout, 99, true).records(2000);
  const DecodedStream decoded = decodeStream(encodeAll(layout, {}, nullptr, records));
  EXPECT_TRUE(decoded.report.clean());
  expectSameRecords(records, decoded.records);
}

// A value from prev's slots that spans one the record left alone and one it changed: the coders
// keep only the changed slots' old values aside, and must read the other from the current state.
TEST(DiffCodec, ValueFromPrevSlotsSpanningAnUnchangedOne) {
  const std::vector<uint8_t> nop = {0x90};
  // r1 changes; the 16 bytes read are r0 (unchanged) and r1 as they were before.
  MemoryAccess load{0x2000, 16, true, false, concat({le64(0x1111), le64(0x2222)}), {}};
  const std::vector<TraceRecord> records = {{{0x1111, 0x2222, 0x1000}, {}, nop, {}, false},
                                            {{0x1111, 0x3333, 0x1001}, {}, nop, {load}, false}};
  const std::vector<uint8_t> stream = encodeAll(kTiny, {16, 2, 0}, nullptr, records);
  // The record ends in its memory section: no slots, 1 escape at +0x2000 (zigzag 0x4000),
  // 16 bytes, read, value = prev's slot 0 onwards: source code 1 + 3 slots + 0.
  const std::vector<uint8_t> memory = {0x01, 0x01, 0x80, 0x80, 0x01, 0x10, 0x01, 0x04};
  ASSERT_GE(stream.size(), memory.size());
  EXPECT_EQ(
      std::vector<uint8_t>(stream.end() - static_cast<ptrdiff_t>(memory.size()), stream.end()),
      memory);
  const DecodedStream decoded = decodeStream(stream);
  EXPECT_TRUE(decoded.report.clean());
  expectSameRecords(records, decoded.records);
}

// A model's answer has room for kMaxModelSlots; one more makes the instruction unpredictable.
TEST(DiffCodec, ModelSlotsHoldUpToTheLimit) {
  MemorySlots slots;
  for (unsigned k = 0; k < kMaxModelSlots; ++k)
    EXPECT_TRUE(slots.add({0x1000 + k, 1, true, false})) << k;
  EXPECT_FALSE(slots.add({0x2000, 1, true, false}));
  ASSERT_EQ(slots.size(), kMaxModelSlots);
  EXPECT_EQ(slots[kMaxModelSlots - 1].address, 0x1000 + kMaxModelSlots - 1);
  slots.clear();
  EXPECT_TRUE(slots.empty());
}

TEST(DiffCodec, SlotsWithoutTheModelAreReportedAsDamage) {
  const StreamLayout layout = layoutFor(Isa::X86_64, false);
  FakeModel model(layout.mainCount);
  TraceRecord first;
  first.regs.assign(layout.mainCount, 0x1000);
  TraceRecord second = first;
  second.instruction = {0x05, 0x00}; // one 2-byte read at regs[0] + pc % 7
  second.memory = {{0x1000 + 0x1000 % 7, 2, true, false, {0xaa, 0xbb}, {}}};
  const std::vector<uint8_t> stream = encodeAll(layout, {}, &model, {first, second});
  const DecodedStream decoded = decodeStream(stream, nullptr);
  ASSERT_EQ(decoded.report.damage.size(), 1u);
  EXPECT_NE(decoded.report.damage[0].reason.find("without a memory operand model"),
            std::string::npos)
      << decoded.report.damage[0].reason;
  EXPECT_EQ(decoded.records.size(), 1u); // the keyframe, delivered before the bad record
  expectSameRecords({first, second}, decodeStream(stream, &model).records);
}

TEST(DiffCodec, EdgeValuesRoundTrip) {
  const StreamLayout layout = layoutFor(Isa::AArch64, true);
  std::vector<TraceRecord> records;
  TraceRecord r;
  r.regs.assign(layout.mainCount, 0);
  r.ext.assign(layout.extSlots, 0);
  records.push_back(r);
  for (uint64_t v : {uint64_t{1}, ~uint64_t{0}, uint64_t{0}, uint64_t{1} << 63,
                     (uint64_t{1} << 63) - 1, uint64_t{0x8000000000000001}, uint64_t{2}}) {
    for (uint64_t &x : r.regs)
      x = v;
    for (uint64_t &x : r.ext)
      x = ~v;
    records.push_back(r);
  }
  for (int i = 0; i < 40; ++i) { // 0, +1 and -1 steps of every register, repeatedly
    for (size_t s = 0; s < r.regs.size(); ++s)
      r.regs[s] += static_cast<uint64_t>(static_cast<int64_t>(s % 3) - 1);
    records.push_back(r);
  }
  MemoryAccess huge{0xfffffffffffffff0ull, kMaxAccessBytes, true, true, {}, {}};
  huge.readValue.assign(kMaxAccessBytes, 0x5a);
  huge.writtenValue.assign(kMaxAccessBytes, 0xa5);
  r.memory = {huge};
  records.push_back(r);
  for (const EncoderOptions &options : {EncoderOptions{}, EncoderOptions{3, 0, 0}}) {
    const DecodedStream decoded = decodeStream(encodeAll(layout, options, nullptr, records));
    EXPECT_TRUE(decoded.report.clean());
    expectSameRecords(records, decoded.records);
  }
  records.pop_back(); // the one with memory
  for (TraceRecord &record : records)
    record.ext.clear();
  const StreamLayout main = layoutFor(Isa::AArch64, false);
  const DecodedStream decoded =
      decodeStream(encodeAll(main, {4096, 0, 0, RecordCoding::Sampled}, nullptr, records));
  EXPECT_TRUE(decoded.report.clean());
  expectSameRecords(records, decoded.records);
}

// A loop whose registers change by steady strides costs one byte per record before zlib.
TEST(DiffCodec, SteadyLoopCostsOneBytePerRecord) {
  const StreamLayout layout = layoutFor(Isa::X86_64, false);
  std::vector<TraceRecord> records;
  TraceRecord r;
  r.regs.assign(layout.mainCount, 0);
  const uint64_t loop[] = {0x401000, 0x401004, 0x401007, 0x40100a}; // add; add; cmp; jne back
  r.regs[16] = loop[0];
  records.push_back(r);
  for (int i = 0; i < 4000; ++i) {
    const size_t at = static_cast<size_t>(i) % 4;
    r.instruction.assign(at == 0 ? 4 : 3, static_cast<uint8_t>(at));
    if (at == 0)
      r.regs[0] += 1; // counter
    if (at == 1)
      r.regs[3] += 8; // pointer
    if (at == 2)
      r.regs[17] = i + 1 == 4000 ? 0x246 : 0x202; // flags of the compare
    r.regs[16] = loop[(at + 1) % 4];
    records.push_back(r);
  }
  const std::vector<uint8_t> stream = encodeAll(layout, {8192, 12, 0}, nullptr, records);
  EXPECT_LT(stream.size(), records.size() + 100); // header, keyframe, first round of each pc
  expectSameRecords(records, decodeStream(stream).records);
}

// --- memory as remembered ---

// A loop of three instructions with memory, for FakeModel: A loads 8 bytes at r0 + pc % 7 into
// r1 (a value in this record's slot 1); B adds the 8 bytes at r3 + pc % 7 to r4 (a literal); C
// loads 8 bytes at r5 + pc % 7 (a literal) and stores r7:r8 at r6 + 8 + pc % 7 (this record's
// slots 7 and 8). Iterations for which `odd` holds break the pattern: A's value lands elsewhere
// (even iterations) or A reads 8 bytes further on (odd ones), B reads a second place the model
// does not predict, C leaves out its store.
std::vector<TraceRecord> memoryLoop(const StreamLayout &layout, int iterations,
                                    bool (*odd)(int iteration)) {
  const std::vector<uint8_t> a = {0x0d, 0x00, 0x90}, b = {0x0d, 0x03, 0x90}, c = {0x0e, 0x05, 0x90};
  const uint64_t pcs[] = {0x401000, 0x401003, 0x401006};
  std::mt19937_64 random(7);
  TraceRecord r;
  r.regs.assign(layout.mainCount, 0);
  for (unsigned k = 0; k < layout.mainCount; ++k)
    r.regs[k] = 0x7ffc00001000 + 0x1000 * k;
  r.regs[layout.pcIndex] = pcs[0];
  std::vector<TraceRecord> records = {r};
  for (int i = 0; i < iterations; ++i) {
    const bool breaks = odd(i);
    for (unsigned at = 0; at < 3; ++at) {
      const TraceRecord prev = r;
      const uint64_t pc = pcs[at];
      r.memory.clear();
      const uint64_t loaded = random();
      if (at == 0) {
        r.instruction = a;
        const bool further = breaks && i % 2 == 1;
        r.regs[1] = breaks && !further ? loaded + 1 : loaded;
        r.regs[0] += 8;
        r.memory.push_back(
            {prev.regs[0] + pc % 7 + (further ? 8 : 0), 8, true, false, le64(loaded), {}});
      } else if (at == 1) {
        r.instruction = b;
        r.regs[4] += loaded;
        r.memory.push_back({prev.regs[3] + pc % 7, 8, true, false, le64(loaded), {}});
        if (breaks)
          r.memory.push_back({0x5000, 4, true, false, {1, 2, 3, 4}, {}});
      } else {
        r.instruction = c;
        r.regs[5] += 16;
        r.memory.push_back({prev.regs[5] + pc % 7, 8, true, false, le64(loaded), {}});
        if (!breaks)
          r.memory.push_back({prev.regs[6] + 8 + pc % 7,
                              16,
                              false,
                              true,
                              {},
                              concat({le64(r.regs[7]), le64(r.regs[8])})});
      }
      r.regs[layout.pcIndex] = pcs[(at + 1) % 3];
      records.push_back(r);
    }
  }
  return records;
}

// From the third time at each pc, the loop's records store no memory section: A's value costs
// nothing, B's and C's literals their bytes, C's store nothing. Against the section, that saves
// its head and each value's source code: 7 bytes an iteration.
TEST(DiffCodec, LoopMemoryIsRemembered) {
  const StreamLayout layout = layoutFor(Isa::X86_64, false);
  const std::vector<TraceRecord> records = memoryLoop(layout, 200, [](int) { return false; });
  FakeModel model(layout.mainCount);
  FakeModelWithoutFormulas asking(layout.mainCount);
  const EncoderOptions raw{8192, 12, 0};
  const std::vector<uint8_t> remembered = encodeAll(layout, raw, &model, records);
  const std::vector<uint8_t> sections = encodeAll(layout, raw, &asking, records);
  EXPECT_GE(sections.size(), remembered.size() + 7 * 198);

  FakeModel decoderModel(layout.mainCount);
  const DecodedStream decoded = decodeStream(remembered, &decoderModel);
  EXPECT_TRUE(decoded.report.clean());
  expectSameRecords(records, decoded.records);
  FakeModelWithoutFormulas decoderAsking(layout.mainCount);
  expectSameRecords(records, decodeStream(sections, &decoderAsking).records);
}

// Records that do not match what their pc remembers are coded in full and re-learned; the
// stream decodes exactly with any block length, table size and pattern of breaks.
TEST(DiffCodec, RememberedMemoryFallsBackWhereRecordsDiffer) {
  const StreamLayout layout = layoutFor(Isa::X86_64, false);
  for (auto odd : {+[](int i) { return i % 2 == 1; }, +[](int i) { return i % 5 == 3; },
                   +[](int i) { return i < 3 || i > 100; }}) {
    const std::vector<TraceRecord> records = memoryLoop(layout, 150, odd);
    for (const EncoderOptions &options :
         {EncoderOptions{}, EncoderOptions{7, 12, 0}, EncoderOptions{64, 0, 0}}) {
      FakeModel encoderModel(layout.mainCount), decoderModel(layout.mainCount);
      const DecodedStream decoded =
          decodeStream(encodeAll(layout, options, &encoderModel, records), &decoderModel);
      EXPECT_TRUE(decoded.report.clean());
      expectSameRecords(records, decoded.records);
    }
  }
}

// Against its contract, formulas of other sizes than the model's slots (16 bytes each).
class FakeModelWithOtherSizes : public FakeModel {
public:
  using FakeModel::FakeModel;
  bool formulas(std::span<const uint8_t> bytes, uint64_t pc, AccessFormulas &out) override {
    AccessFormulas asked;
    if (!FakeModel::formulas(bytes, pc, asked))
      return false;
    out.clear();
    for (AccessFormula f : asked) {
      f.size = 16;
      out.add(f);
    }
    return true;
  }
};

// A pc learns its memory only from formulas of its slots' sizes and directions, at which its
// values were checked: records as remembered are then not checked again. A decoder whose model
// disagrees with itself reports them as damage instead of reading values past their slots.
TEST(DiffCodec, MemoryIsRememberedOnlyAtTheSlotsSizes) {
  const StreamLayout layout = layoutFor(Isa::X86_64, false);
  const std::vector<TraceRecord> records = memoryLoop(layout, 20, [](int) { return false; });
  FakeModel model(layout.mainCount);
  const std::vector<uint8_t> stream = encodeAll(layout, {8192, 12, 0}, &model, records);
  FakeModelWithOtherSizes other(layout.mainCount);
  const DecodedStream decoded = decodeStream(stream, &other);
  ASSERT_EQ(decoded.report.damage.size(), 1u);
  EXPECT_NE(decoded.report.damage[0].reason.find("none was learned"), std::string::npos);
  // The records before the first as remembered (its pc's third time), exactly.
  ASSERT_EQ(decoded.records.size(), 7u);
  expectSameRecords({records.begin(), records.begin() + 7}, decoded.records);
}

// A record may say its memory is as remembered only where the stream's version has the bit,
// never with a memory section, and only where something was learned.
TEST(DiffCodec, MemoryAsRememberedIsCheckedByTheDecoder) {
  auto reason = [](uint8_t version, uint8_t memoryBits) {
    const std::vector<uint8_t> header =
        concat({{'S', 'D', 'I', 'F', version, 0x01}, {0x03, 0x02, 0x00, 0x10, 0x02, 0x00, 0x00}});
    // The keyframe of tinyLoop, then a record at 0x1000 with its byte 90, falling through.
    const std::vector<uint8_t> payload = {
        0x80, 0x20, 0x05, 0x80, 0x02, 0x01, 0x90, 0x00, static_cast<uint8_t>(memoryBits | 0x11),
        0x01, 0x90};
    const DecodedStream decoded = decodeStream(tinyStream(header, 2, payload));
    EXPECT_EQ(decoded.records.size(), 1u); // the keyframe
    return decoded.report.damage.empty() ? std::string() : decoded.report.damage[0].reason;
  };
  EXPECT_NE(reason(3, kMemoryRemembered).find("none was learned"), std::string::npos);
  EXPECT_NE(reason(2, kMemoryRemembered).find("reserved bits"), std::string::npos);
  EXPECT_NE(reason(3, kMemoryRemembered | kMemoryFollows).find("reserved bits"), std::string::npos);
}

// --- damage ---

// Stepped records with memory and extended state, or samples.
class DamagedStream : public ::testing::TestWithParam<RecordCoding> {
protected:
  void SetUp() override {
    const bool sampled = GetParam() == RecordCoding::Sampled;
    layout_ = layoutFor(Isa::X86_64, !sampled);
    records_ = TraceGenerator(layout_, 5, !sampled).records(kBlocks * kInterval);
    if (sampled)
      records_ = asSamples(std::move(records_));
    for (TraceRecord &r : records_)
      r.gap = false; // blocks then hold exactly kInterval records
    FakeModel model(layout_.mainCount);
    stream_ = encodeAll(layout_, {kInterval, sampled ? 0u : 10u, 1, GetParam()}, &model, records_);
    // Where each block starts: the sync bytes (the payload is compressed, so check the count).
    for (size_t at = 0; at + 4 <= stream_.size(); ++at)
      if (std::equal(kBlockSync.begin(), kBlockSync.end(), stream_.begin() + at))
        blockStarts_.push_back(at);
    ASSERT_EQ(blockStarts_.size(), kBlocks);
  }

  DecodedStream decode(const std::vector<uint8_t> &bytes) {
    FakeModel model(layout_.mainCount);
    return decodeStream(bytes, &model);
  }

  // The records expected when block `lost` is lost: the others, the one after it marked.
  std::vector<TraceRecord> without(size_t lost) const {
    std::vector<TraceRecord> out;
    for (size_t i = 0; i < records_.size(); ++i) {
      if (i / kInterval == lost)
        continue;
      out.push_back(records_[i]);
      if (i == (lost + 1) * kInterval)
        out.back().gap = true;
    }
    return out;
  }

  static constexpr uint32_t kInterval = 6;
  static constexpr size_t kBlocks = 5;
  StreamLayout layout_;
  std::vector<TraceRecord> records_;
  std::vector<uint8_t> stream_;
  std::vector<size_t> blockStarts_;
};

TEST_P(DamagedStream, EveryCutKeepsTheWholeBlocksBeforeIt) {
  for (size_t size = 0; size < stream_.size(); ++size) {
    SCOPED_TRACE("cut to " + std::to_string(size) + " bytes");
    const DecodedStream decoded =
        decode(std::vector<uint8_t>(stream_.begin(), stream_.begin() + size));
    if (size < blockStarts_[0]) {
      EXPECT_FALSE(decoded.report.header);
      EXPECT_TRUE(decoded.records.empty());
      ASSERT_EQ(decoded.report.damage.size(), 1u);
      continue;
    }
    const size_t whole = std::upper_bound(blockStarts_.begin(), blockStarts_.end(), size) -
                         blockStarts_.begin() - 1; // blocks before the one cut
    const bool atBoundary = size == blockStarts_[whole];
    EXPECT_EQ(decoded.report.damage.size(), atBoundary ? 0u : 1u);
    expectSameRecords(
        std::vector<TraceRecord>(records_.begin(), records_.begin() + whole * kInterval),
        decoded.records);
  }
}

TEST_P(DamagedStream, EveryFlippedByteLosesOnlyItsBlock) {
  for (size_t at = 0; at < stream_.size(); ++at) {
    SCOPED_TRACE("byte " + std::to_string(at) + " flipped");
    std::vector<uint8_t> damaged = stream_;
    damaged[at] ^= 0x24;
    const DecodedStream decoded = decode(damaged);
    EXPECT_FALSE(decoded.report.damage.empty());
    if (at < blockStarts_[0]) {
      EXPECT_FALSE(decoded.report.header);
      EXPECT_TRUE(decoded.records.empty());
      continue;
    }
    const size_t block =
        std::upper_bound(blockStarts_.begin(), blockStarts_.end(), at) - blockStarts_.begin() - 1;
    expectSameRecords(without(block), decoded.records);
  }
}

TEST_P(DamagedStream, GarbageBetweenBlocksIsSkipped) {
  std::vector<uint8_t> damaged(stream_.begin(), stream_.begin() + blockStarts_[3]);
  damaged.insert(damaged.end(), {0x9e, 0x51, 0xd1, 0xf5, 0x00, 0x01, 0x7f, 1, 2, 3});
  damaged.insert(damaged.end(), stream_.begin() + blockStarts_[3], stream_.end());
  const DecodedStream decoded = decode(damaged);
  ASSERT_EQ(decoded.report.damage.size(), 1u); // the false block; the real one follows its sync
  EXPECT_EQ(decoded.report.damage[0].offset, blockStarts_[3]);
  std::vector<TraceRecord> expected = records_;
  expected[3 * kInterval].gap = true;
  expectSameRecords(expected, decoded.records);
}

INSTANTIATE_TEST_SUITE_P(Codings, DamagedStream,
                         ::testing::Values(RecordCoding::Stepped, RecordCoding::Sampled),
                         [](const ::testing::TestParamInfo<RecordCoding> &info) {
                           return info.param == RecordCoding::Sampled ? "Sampled" : "Stepped";
                         });

TEST(DiffCodec, RandomBytesNeverCrashTheDecoder) {
  std::mt19937 random(11);
  for (const RecordCoding coding : {RecordCoding::Stepped, RecordCoding::Sampled}) {
    const bool sampled = coding == RecordCoding::Sampled;
    SCOPED_TRACE(sampled ? "sampled" : "stepped");
    const StreamLayout layout = layoutFor(Isa::X86_64, !sampled);
    FakeModel model(layout.mainCount);
    std::vector<TraceRecord> records = TraceGenerator(layout, 3, !sampled).records(100);
    if (sampled)
      records = asSamples(std::move(records));
    const std::vector<uint8_t> valid =
        encodeAll(layout, {16, sampled ? 0u : 8u, 0, coding}, &model, records);
    StreamHeader header;
    std::span<const uint8_t> rest = valid;
    ASSERT_FALSE(readStreamHeader(rest, header));
    for (int i = 0; i < 1000; ++i) {
      // Up to 2000 bytes: the vector sample decoder reads wide only with 616 or more left.
      std::vector<uint8_t> bytes(random() % (i % 2 ? 200 : 2000));
      for (uint8_t &b : bytes)
        b = static_cast<uint8_t>(random());
      // Raw payloads reach the record decoder directly (a CRC stops random framed bytes).
      decodePayload(header, &model, bytes, 1 + random() % 20,
                    [&](const TraceRecord &r) { EXPECT_EQ(r.regs.size(), layout.mainCount); });
      // Valid stream with a random tail spliced in.
      std::vector<uint8_t> spliced(valid.begin(), valid.begin() + random() % valid.size());
      spliced.insert(spliced.end(), bytes.begin(), bytes.end());
      const DecodedStream decoded = decodeStream(spliced, &model);
      EXPECT_LE(decoded.records.size(), 100u);
    }
  }
}

} // namespace
