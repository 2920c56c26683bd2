// `strobe dump`: step traces and samples as text for people and as Tenet trace text. Expected
// lines are written from the record semantics (record i = the state after the instruction at
// record i-1's pc) and Tenet's format, not produced by the renderer.
#include "report/Dump.h"
#include "report/Annotate.h"
#include "report/TenetText.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace strobe;

namespace {

// The dump as one string.
std::string renderDump(const Capture &capture, const DumpOptions &options) {
  std::string out;
  writeDump(capture, options, [&](std::string_view piece) { out += piece; });
  return out;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// x86-64: push rbp (55) at 0x401000, then mov rbp, rsp (48 89 e5) at 0x401001.
Capture twoInstructions() {
  Capture c;
  c.header.isa = Isa::X86_64;
  TraceRecord start;
  start.regs.assign(21, 0);
  start.regs[6] = 0x10;      // rbp
  start.regs[7] = 0x7ff0;    // rsp
  start.regs[16] = 0x401000; // rip
  start.regs[17] = 0x246;    // eflags
  TraceRecord pushed = start;
  pushed.instruction = {0x55};
  pushed.regs[7] = 0x7fe8;
  pushed.regs[16] = 0x401001;
  pushed.memory = {{0x7fe8, 8, false, true, {}, {0x10, 0, 0, 0, 0, 0, 0, 0}}};
  TraceRecord moved = pushed;
  moved.instruction = {0x48, 0x89, 0xe5};
  moved.regs[6] = 0x7fe8;
  moved.regs[16] = 0x401004;
  moved.memory.clear();
  c.stepTraces.emplace_back(Isa::X86_64, 42, true, std::vector<TraceRecord>{start, pushed, moved});
  c.symbols[0x401000] = {"main", 0x401000, 0x20, "main.c", 3, {}};
  c.symbols[0x401001] = {"main", 0x401000, 0x20, "main.c", 3, {}};
  return c;
}

} // namespace

TEST(Dump, StepTraceListsEachInstructionWithWhatItChanged) {
  const Capture c = twoInstructions();
  const std::vector<std::string> got = lines(renderStepTrace(c, c.stepTraces[0]));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], "step trace of thread 42: 3 records, with memory");
  EXPECT_TRUE(got[1].starts_with("      0  (start) rax=0x0 rbx=0x0")) << got[1];
  EXPECT_NE(got[1].find(" rsp=0x7ff0 "), std::string::npos) << got[1];
  EXPECT_NE(got[1].find(" rip=0x401000 eflags=0x246 "), std::string::npos) << got[1];
  // main is 0x20 bytes long: each location takes the width of "<main+0x1f>".
  EXPECT_EQ(got[2], "      1  0x401000 <main>       push rbp                         rsp=0x7fe8 "
                    "rip=0x401001  write [0x7fe8]:8=0x10");
  EXPECT_EQ(got[3], "      2  0x401001 <main+0x1>   mov rbp, rsp                     rbp=0x7fe8 "
                    "rip=0x401004");
}

// A function of unknown size, or an address no function covers, takes the room it needs.
TEST(Dump, LocationsWithoutAFunctionSizeAreNotPadded) {
  Capture c = twoInstructions();
  c.symbols[0x401000].size = 0;
  c.symbols.erase(0x401001);
  const std::vector<std::string> got = lines(renderStepTrace(c, c.stepTraces[0]));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(got[2].starts_with("      1  0x401000 <main>  push rbp ")) << got[2];
  EXPECT_TRUE(got[3].starts_with("      2  0x401001  mov rbp, rsp ")) << got[3];
}

// Records after a loss (a damaged chunk of a file) keep the numbers they had when taken.
TEST(Dump, RecordsAfterALossKeepTheirNumbers) {
  Capture c = twoInstructions();
  const std::vector<TraceRecord> records = c.stepTraces[0].records();
  StepTrace cut(Isa::X86_64, 42, true);
  cut.append(records[0]);
  TraceRecord afterLoss = records[2];
  afterLoss.gap = true;
  cut.numberNext(8192);
  cut.append(afterLoss);
  const std::vector<std::string> got = lines(renderStepTrace(c, cut));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[1].starts_with("      0  (start) ")) << got[1];
  EXPECT_TRUE(got[2].starts_with("   8192  (after a gap) ")) << got[2];
}

TEST(Dump, ExtendedRegistersShowAsWholeRegisters) {
  Capture c;
  c.header.isa = Isa::X86_64;
  const size_t slots = registerTable(Isa::X86_64).extSlots();
  TraceRecord a;
  a.regs.assign(21, 0);
  a.ext.assign(slots, 0);
  TraceRecord b = a;
  b.instruction = {0x90};
  b.regs[16] = 1;
  b.ext[9] = 0x1122334455667788; // xmm0 low half (after 9 8-byte registers)
  b.ext[10] = 0x99;              // xmm0 high half
  c.stepTraces.emplace_back(Isa::X86_64, 1, false, std::vector<TraceRecord>{a, b});
  const std::vector<std::string> got = lines(renderStepTrace(c, c.stepTraces[0]));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[2].ends_with(" rip=0x1 xmm0=0x991122334455667788")) << got[2];
}

TEST(Dump, TenetLinesHoldTheStateBeforeEachInstructionAndItsMemory) {
  const Capture c = twoInstructions();
  DumpOptions options;
  options.format = DumpFormat::Tenet;
  const std::vector<std::string> got = lines(renderDump(c, options));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "rax=0x0,rbx=0x0,rcx=0x0,rdx=0x0,rsi=0x0,rdi=0x0,rbp=0x10,rsp=0x7ff0,r8=0x0,"
                    "r9=0x0,r10=0x0,r11=0x0,r12=0x0,r13=0x0,r14=0x0,r15=0x0,rip=0x401000,"
                    "mw=0x7fe8:1000000000000000");
  EXPECT_EQ(got[1], "rsp=0x7fe8,rip=0x401001");
  EXPECT_EQ(got[2], "rbp=0x7fe8,rip=0x401004");
}

// A long trace's text comes in pieces of about a megabyte, which together are the whole.
TEST(Dump, ALongDumpComesInPiecesThatMakeTheWhole) {
  Capture c;
  c.header.isa = Isa::X86_64;
  std::vector<TraceRecord> records(20000);
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].regs.assign(21, i);
    records[i].regs[16] = 0x401000 + 4 * i; // rip
    if (i > 0)
      records[i].instruction = {0x48, 0x83, 0xc0, 0x01}; // add rax, 1
  }
  c.stepTraces.emplace_back(Isa::X86_64, 7, false, records);
  for (const DumpFormat format : {DumpFormat::Text, DumpFormat::Tenet}) {
    DumpOptions options;
    options.format = format;
    options.samples = false;
    std::vector<std::string> pieces;
    writeDump(c, options, [&](std::string_view piece) { pieces.emplace_back(piece); });
    const std::string whole = renderDump(c, options);
    ASSERT_GT(whole.size(), size_t{2} << 20) << "enough text for several pieces";
    EXPECT_GE(pieces.size(), 2u);
    std::string joined;
    for (const std::string &piece : pieces) {
      EXPECT_LT(piece.size(), size_t{1} << 21); // a megabyte and the record that passed it
      joined += piece;
    }
    EXPECT_EQ(joined, whole);
    // Text: a heading, then a line per record; Tenet: a line per record.
    EXPECT_EQ(lines(whole).size(), records.size() + (format == DumpFormat::Text ? 1 : 0));
  }
}

TEST(Dump, TenetOfAReadModifyWriteHasBothDirections) {
  std::vector<TraceRecord> records(2);
  records[0].regs.assign(34, 0);
  records[0].regs[32] = 0x1000; // pc
  records[1] = records[0];
  records[1].regs[32] = 0x1004;
  records[1].memory = {{0x20, 2, true, true, {0xab, 0xcd}, {0x01, 0x02}}};
  std::string out;
  appendTenet(Isa::AArch64, records, out);
  const std::vector<std::string> got = lines(out);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].ends_with(",x30=0x0,sp=0x0,pc=0x1000,mr=0x20:abcd,mw=0x20:0102")) << got[0];
  EXPECT_EQ(got[1], "pc=0x1004");
}

TEST(Dump, TenetNeedsOneThread) {
  Capture c = twoInstructions();
  c.stepTraces.emplace_back(Isa::X86_64, 43, true, c.stepTraces[0].records());
  DumpOptions options;
  options.format = DumpFormat::Tenet;
  try {
    renderDump(c, options);
    ADD_FAILURE() << "two threads in one Tenet trace";
  } catch (const ReportError &e) {
    EXPECT_EQ(std::string(e.what()), "a Tenet trace holds one thread; choose one of 42, 43 with "
                                     "--thread");
  }
  options.tid = 43;
  EXPECT_EQ(lines(renderDump(c, options)).size(), 3u);
}

TEST(Dump, SamplesShowTimeThreadPcAndChangedRegisters) {
  Capture c;
  c.header.isa = Isa::X86_64;
  std::vector<uint64_t> regs(21, 0);
  regs[16] = 0x401000;
  c.samples.push_back({1'500'000, 7, true, false, {0x401000}, regs});
  c.samples.push_back({2'000'000, 8, false, true, {0x401000}, {}});
  regs[0] = 5;
  regs[16] = 0x401001;
  c.samples.push_back({2'500'000, 7, true, false, {0x401001}, regs});
  c.symbols[0x401000] = {"spin", 0x401000, 0x10, "", 0, {}};
  DumpOptions options;
  options.steps = false;
  const std::vector<std::string> got = lines(renderDump(c, options));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], "samples: 3");
  EXPECT_TRUE(got[1].starts_with("      0  0.001500 s  thread 7  0x401000 <spin> rax=0x0 "))
      << got[1];
  EXPECT_EQ(got[2], "      1  0.002000 s  thread 8  0x401000 <spin> (off cpu) (in syscall)");
  EXPECT_EQ(got[3], "      2  0.002500 s  thread 7  0x401001 rax=0x5 rip=0x401001");
  options.tid = 8;
  EXPECT_EQ(lines(renderDump(c, options)).size(), 2u);
  options.tid = 9;
  for (DumpFormat format : {DumpFormat::Text, DumpFormat::Tenet}) {
    options.format = format;
    try {
      renderDump(c, options);
      ADD_FAILURE() << "a thread with no records";
    } catch (const ReportError &e) {
      EXPECT_EQ(std::string(e.what()), "no records of thread 9; threads: 7, 8");
    }
  }
}

// A dump lists the samples of the threads it shows, and says there are none only when it shows
// no step trace either.
TEST(Dump, ASampleCountFollowsAStepTraceOnlyWhenThereAreSamples) {
  Capture c = twoInstructions();
  std::vector<std::string> got = lines(renderDump(c, {}));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], "step trace of thread 42: 3 records, with memory");
  c.samples.push_back({1'000'000, 43, true, false, {0x401000}, std::vector<uint64_t>(21, 0)});
  got = lines(renderDump(c, {}));
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[4], "samples: 1");
  DumpOptions options;
  options.tid = 42;
  EXPECT_EQ(lines(renderDump(c, options)).size(), 4u);
  c.stepTraces.clear();
  options.tid.reset();
  c.samples.clear();
  EXPECT_EQ(lines(renderDump(c, options)), std::vector<std::string>{"samples: 0"});
}
