#include "capture/StepTrace.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using namespace strobe;

namespace {

const RegisterTable &kTable = registerTable(Isa::X86_64);

// `count` records of a loop of `mov rax, [rbx + 8]` (memory on every record but the first),
// with the vector state on every record from `extFrom` on and a gap at `gapAt`.
std::vector<TraceRecord> loadLoop(size_t count, size_t extFrom, size_t gapAt) {
  std::vector<TraceRecord> records;
  TraceRecord r;
  r.regs.assign(kTable.regs.size(), 0);
  r.regs[kTable.pc] = 0x401000;
  r.regs[3] = 0x10000; // rbx
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) {
      const uint64_t address = r.regs[3] + 8;
      r.instruction = {0x48, 0x8b, 0x43, 0x08};
      r.regs[0] = 0x1111 * i;
      r.memory = {{address, 8, true, false, {}, {}}};
      for (int k = 0; k < 8; ++k)
        r.memory[0].readValue.push_back(static_cast<uint8_t>(r.regs[0] >> (8 * k)));
      r.regs[3] += 16;
      r.regs[kTable.pc] = i % 5 == 4 ? 0x401000 : r.regs[kTable.pc] + 4;
    }
    r.ext.assign(i >= extFrom ? kTable.extSlots() : 0, 0);
    if (!r.ext.empty())
      r.ext[9] = i / 3; // xmm0's low half changes every third record
    r.gap = i == gapAt;
    records.push_back(r);
  }
  return records;
}

size_t storedBytes(const StepTrace &trace) {
  size_t bytes = 0;
  for (const StepTrace::Chunk &chunk : trace.chunks())
    bytes += chunk.stream.size();
  return bytes;
}

} // namespace

TEST(StepTrace, GivesBackEveryRecordAppendedInOrder) {
  // Across a chunk boundary, a change to records with the vector state and a gap.
  const std::vector<TraceRecord> records = loadLoop(20000, 5000, 12000);
  StepTrace trace(Isa::X86_64, 7, true, records);
  EXPECT_EQ(trace.size(), records.size());
  EXPECT_EQ(trace.back(), records.back());
  size_t visited = 0;
  trace.forEach([&](const TraceRecord &record) {
    ASSERT_LT(visited, records.size());
    EXPECT_EQ(record, records[visited]) << "record " << visited;
    ++visited;
  });
  EXPECT_EQ(visited, records.size());
  // 0-4999 without the vector state, then 8192 records with it, then the rest.
  ASSERT_EQ(trace.chunks().size(), 3u);
  EXPECT_EQ(trace.chunks()[0].records, 5000u);
  EXPECT_EQ(trace.chunks()[1].records, 8192u);
  EXPECT_EQ(trace.chunks()[2].records, 6808u);
}

TEST(StepTrace, HoldsARecordInAFewBytes) {
  const std::vector<TraceRecord> records = loadLoop(20000, 0, 20000);
  const StepTrace trace(Isa::X86_64, 7, true, records);
  // Decoded, each record takes over 800 bytes: 21 registers and 90 extended slots.
  EXPECT_GT(records[1].regs.size() * 8 + records[1].ext.size() * 8, 800u);
  EXPECT_LT(storedBytes(trace), records.size() * 2) << "bytes for " << records.size();
}

TEST(StepTrace, ReadingItThenAppendingMoreLosesNothing) {
  const std::vector<TraceRecord> records = loadLoop(30, 10, 30);
  StepTrace trace(Isa::X86_64, 7, true);
  for (size_t i = 0; i < records.size(); ++i) {
    trace.append(records[i]);
    if (i % 7 == 0) { // each read closes the stream being written
      EXPECT_EQ(trace.records(),
                std::vector<TraceRecord>(records.begin(), records.begin() + i + 1));
    }
  }
  EXPECT_EQ(trace.records(), records);
}

TEST(StepTrace, ACopyIsEqualAndIndependent) {
  const std::vector<TraceRecord> records = loadLoop(100, 50, 100);
  StepTrace trace(Isa::X86_64, 7, true, std::span(records).first(60));
  StepTrace copy = trace;
  EXPECT_EQ(copy, trace);
  for (size_t i = 60; i < records.size(); ++i)
    trace.append(records[i]);
  EXPECT_EQ(trace.records(), records);
  EXPECT_EQ(copy.size(), 60u);
  EXPECT_EQ(copy.records(), std::vector<TraceRecord>(records.begin(), records.begin() + 60));
  EXPECT_FALSE(copy == trace);
}

TEST(StepTrace, ARefusedRecordLeavesTheTraceAsItWas) {
  const std::vector<TraceRecord> records = loadLoop(3, 0, 3);
  StepTrace trace(Isa::X86_64, 7, true);
  TraceRecord wrong = records[0];
  wrong.regs.pop_back();
  EXPECT_THROW(trace.append(wrong), std::invalid_argument);
  EXPECT_TRUE(trace.empty());
  EXPECT_TRUE(trace.chunks().empty());
  for (const TraceRecord &record : records)
    trace.append(record);
  EXPECT_THROW(trace.append(wrong), std::invalid_argument);
  EXPECT_EQ(trace.size(), 3u);
  EXPECT_EQ(trace.records(), records);
}
