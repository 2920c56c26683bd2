// `strobe mem table | leaks | status` output on spec 003's T2-T4 captures. Expected rows are
// compared token by token; every value was worked out by hand in the comments.
#include "FakeAllocTarget.h"

#include "report/MemoryReport.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace strobe;
using strobe::testing::FakeAllocTarget;

namespace {

constexpr uint64_t kExe = 0x400000, kLibA = 0x7f0000100000, kLibB = 0x7f0000200000,
                   kLibc = 0x7f0000300000;
constexpr uint64_t kMallocPc = kLibc + 0x1000, kFreePc = kLibc + 0x2000,
                   kReallocPc = kLibc + 0x3000, kMemalignPc = kLibc + 0x4000;
constexpr uint64_t kInFuncA0 = kLibA + 0x330, kInFuncB0 = kLibB + 0x120, kInMain = kExe + 0x1250,
                   kInLibcStartMain = kLibc + 0x29d90;

Capture baseCapture() {
  Capture c;
  c.header.program = "/opt/app/app";
  c.modules = {{"/opt/app/app", "", kExe, kExe + 0x10000, 0},
               {"/opt/app/liba.so", "", kLibA, kLibA + 0x10000, kLibA},
               {"/opt/app/libb.so", "", kLibB, kLibB + 0x10000, kLibB},
               {"/lib/x86_64-linux-gnu/libc.so.6", "", kLibc, kLibc + 0x200000, kLibc}};
  c.symbols[kMallocPc] = {"malloc", 0, 0, "", 0, {}};
  c.symbols[kFreePc] = {"free", 0, 0, "", 0, {}};
  c.symbols[kReallocPc] = {"realloc", 0, 0, "", 0, {}};
  c.symbols[kMemalignPc] = {"memalign", 0, 0, "", 0, {}};
  c.symbols[kInFuncA0] = {"func_a0", 0, 0, "/src/liba.c", 12, {}};
  c.symbols[kInFuncB0] = {"func_b0", 0, 0, "/src/libb.c", 34, {}};
  c.symbols[kInMain] = {"main", 0, 0, "/src/app.c", 56, {}};
  c.symbols[kInLibcStartMain] = {"__libc_start_main", 0, 0, "", 0, {}};
  return c;
}

AllocEvent event(char lib, AllocFunction f, uint64_t allocatorPc, uint64_t t = 0) {
  AllocEvent e;
  e.timeNs = t;
  e.tid = 1;
  e.function = f;
  e.stack = {allocatorPc, lib == 'a' ? kInFuncA0 : kInFuncB0, kInMain, kInLibcStartMain};
  return e;
}

AllocEvent alloc(char lib, uint64_t pointer, uint64_t size, uint64_t t = 0) {
  AllocEvent e = event(lib, AllocFunction::Malloc, kMallocPc, t);
  e.pointer = pointer;
  e.size = size;
  return e;
}

AllocEvent release(char lib, uint64_t pointer, uint64_t t = 0) {
  AllocEvent e = event(lib, AllocFunction::Free, kFreePc, t);
  e.previous = pointer;
  return e;
}

// T2: liba malloc(100) -> P1; libb malloc(50) -> P2; liba memalign(64, 200) -> P3; libb free(P1);
// libb realloc(P2, 80) -> P4; liba free(P3); liba free(NULL).
Capture t2() {
  Capture c = baseCapture();
  AllocEvent memalign = event('a', AllocFunction::Memalign, kMemalignPc);
  memalign.pointer = 0x3000;
  memalign.size = 200;
  AllocEvent realloc = event('b', AllocFunction::Realloc, kReallocPc);
  realloc.previous = 0x2000;
  realloc.pointer = 0x4000;
  realloc.size = 80;
  c.allocEvents = {
      alloc('a', 0x1000, 100), alloc('b', 0x2000, 50), memalign, release('b', 0x1000), realloc,
      release('a', 0x3000),    release('a', 0)};
  return c;
}

using Tokens = std::vector<std::string>;

Tokens tokens(const std::string &line) {
  std::istringstream in(line);
  Tokens out;
  for (std::string word; in >> word;)
    out.push_back(word);
  return out;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// The tokens of the first line whose last token is `last`.
Tokens rowEndingWith(const std::string &text, const std::string &last) {
  for (const std::string &line : lines(text)) {
    Tokens t = tokens(line);
    if (!t.empty() && t.back() == last)
      return t;
  }
  return {};
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST(MemoryReportTest, BytesUseBinaryUnitsWithThreeSignificantDigits) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(-20), "-20 B");
  EXPECT_EQ(formatBytes(1024), "1.00 KiB");
  EXPECT_EQ(formatBytes(-1536), "-1.50 KiB");
  EXPECT_EQ(formatBytes(10 * 1024 + 512), "10.5 KiB");
  EXPECT_EQ(formatBytes(300 * 1024), "300 KiB");
  EXPECT_EQ(formatBytes(5 * 1024 * 1024), "5.00 MiB");
  EXPECT_EQ(formatBytes(int64_t{3} << 30), "3.00 GiB");
}

TEST(MemoryReportTest, SortColumnsByName) {
  EXPECT_EQ(memoryColumnFromName("peak"), MemoryColumn::Peak);
  EXPECT_EQ(memoryColumnFromName("min"), MemoryColumn::Minimum);
  EXPECT_EQ(memoryColumnFromName("key"), MemoryColumn::Key);
  EXPECT_FALSE(memoryColumnFromName("bytes"));
}

TEST(MemoryReportTest, LibraryTableOfT2InCallSiteMode) {
  std::string text = renderMemoryTable(t2(), {});
  std::vector<std::string> all = lines(text);
  ASSERT_GE(all.size(), 5u) << text;
  EXPECT_EQ(tokens(all[0]),
            (Tokens{"size", "min", "max", "malloc", "realloc", "free", "memalign", "allocated",
                    "freed", "blocks", "live", "peak", "untracked", "library"}));
  // liba: 100 / 0 / 300, calls 1 0 2 1; allocated P1 + P3 = 300, freed P3 = 200; owns nothing
  // live; its blocks peaked at 300.
  EXPECT_EQ(rowEndingWith(text, "liba.so"),
            (Tokens{"100", "B",   "0", "B", "300", "B", "1",   "0", "2", "1",      "300",
                    "B",   "200", "B", "0", "0",   "B", "300", "B", "0", "liba.so"}));
  // libb: -20 / -50 / 50, calls 1 1 1 0; allocated P2 + P4 = 130, freed P1 + P2 = 150; owns P4.
  EXPECT_EQ(rowEndingWith(text, "libb.so"),
            (Tokens{"-20", "B",   "-50", "B", "50", "B", "1",  "1", "1", "0",      "130",
                    "B",   "150", "B",   "1", "80", "B", "80", "B", "0", "libb.so"}));
  // Process: running sum 100, 150, 350, 250, 280, 80, 80.
  EXPECT_EQ(rowEndingWith(text, "total"),
            (Tokens{"80", "B",   "0", "B", "350", "B", "2",   "1", "3", "1",    "430",
                    "B",  "350", "B", "1", "80",  "B", "350", "B", "0", "total"}));
  EXPECT_LT(text.find("liba.so"), text.find("libb.so")) << "sorted by size, largest first";
}

TEST(MemoryReportTest, SortTopAndOthers) {
  MemoryTableOptions options;
  options.sort = MemoryColumn::Realloc;
  options.top = 1;
  std::string text = renderMemoryTable(t2(), options);
  EXPECT_TRUE(rowEndingWith(text, "liba.so").empty()) << text;
  EXPECT_FALSE(rowEndingWith(text, "libb.so").empty());
  // The hidden liba row, summed: size 100, calls 1 0 2 1, 300 / 200 bytes, 0 blocks, 0 live.
  std::vector<std::string> all = lines(text);
  auto others = std::find_if(all.begin(), all.end(),
                             [](const std::string &l) { return contains(l, "(1 more)"); });
  ASSERT_NE(others, all.end()) << text;
  EXPECT_EQ(tokens(*others), (Tokens{"100", "B", "1", "0", "2", "1", "300", "B", "200", "B", "0",
                                     "0", "B", "0", "(1", "more)"}));
}

TEST(MemoryReportTest, OwnerModeByFunctionAsJson) {
  MemoryTableOptions options;
  options.analysis.frees = FreesMode::Owner;
  options.analysis.attribution.by = KeyBy::Function;
  options.json = true;
  std::string json = renderMemoryTable(t2(), options);
  EXPECT_TRUE(contains(json, R"("by":"function","attribution":"first","frees":"owner","events":7)"))
      << json;
  // liba ends at 0 (max 300), libb at 80 (max 80).
  EXPECT_TRUE(contains(json, R"("size":0,"min":0,"max":300,)")) << json;
  EXPECT_TRUE(contains(json, R"("size":80,"min":0,"max":80,)")) << json;
  EXPECT_TRUE(
      contains(json, R"("key":"liba.so!func_a0","module":"/opt/app/liba.so","function":"func_a0")"))
      << json;
  EXPECT_TRUE(contains(json, R"("total":{"size":80,)")) << json;
  EXPECT_EQ(json.back(), '\n');
}

TEST(MemoryReportTest, PerInvocationRowsInOrder) {
  Capture c = baseCapture();
  c.allocEvents = {alloc('a', 0x11, 10, 1), alloc('a', 0x12, 20, 2), alloc('b', 0x13, 5, 3),
                   release('a', 0x11, 4),   alloc('b', 0x14, 7, 5),  release('b', 0x13, 6)};
  MemoryTableOptions options;
  options.perInvocation = true;
  std::string text = renderMemoryTable(c, options);
  std::vector<Tokens> rows;
  for (const std::string &line : lines(text)) {
    Tokens t = tokens(line);
    if (!t.empty() && (t.back() == "liba.so" || t.back() == "libb.so"))
      rows.push_back(t);
  }
  ASSERT_EQ(rows.size(), 4u) << text;
  // #, start, size, min, max, malloc, realloc, free, memalign, allocated, freed, untracked, key
  EXPECT_EQ(rows[0], (Tokens{"0", "1", "ns", "30", "B", "0", "B", "30", "B", "2", "0", "0", "0",
                             "30", "B", "0", "B", "0", "liba.so"}));
  EXPECT_EQ(rows[2], (Tokens{"2", "4", "ns", "-10", "B", "-10", "B", "0", "B", "0", "0", "1", "0",
                             "0", "B", "10", "B", "0", "liba.so"}));
  EXPECT_EQ(rows[3], (Tokens{"3", "5", "ns", "2", "B", "0", "B", "7", "B", "1", "0", "1", "0", "7",
                             "B", "5", "B", "0", "libb.so"}));
}

TEST(MemoryReportTest, IntervalsListIdleUnitsCumulativeUsage) {
  Capture c = baseCapture();
  c.allocEvents = {alloc('a', 0x21, 100, 1), alloc('b', 0x22, 40, 4), release('a', 0x21, 12),
                   alloc('a', 0x23, 30, 15), release('b', 0x22, 27)};
  MemoryTableOptions options;
  options.intervalNs = 10;
  std::string text = renderMemoryTable(c, options);
  // [0, 10): liba 100 / 0 / 100, malloc 1, allocated 100, cumulative 100.
  EXPECT_EQ(rowEndingWith(text, "liba.so"),
            (Tokens{"0", "ns", "..", "10",  "ns", "100", "B", "0", "B",   "100", "B",      "1",
                    "0", "0",  "0",  "100", "B",  "0",   "B", "0", "100", "B",   "liba.so"}))
      << text;
  EXPECT_TRUE(contains(text, "(others at the end: libb.so 40 B)")) << text;
  EXPECT_TRUE(contains(text, "(others at the end: liba.so 30 B)")) << text;
  std::vector<std::string> all = lines(text);
  // [10, 20): liba -70 / -100 / 0, malloc 1, free 1, allocated 30, freed 100, cumulative 30.
  auto second = std::find_if(all.begin(), all.end(),
                             [](const std::string &l) { return contains(l, "10 ns .. 20 ns"); });
  ASSERT_NE(second, all.end());
  EXPECT_EQ(tokens(*second),
            (Tokens{"10", "ns", "..", "20", "ns", "-70", "B", "-100", "B",  "0", "B",      "1",
                    "0",  "1",  "0",  "30", "B",  "100", "B", "0",    "30", "B", "liba.so"}));

  options.json = true;
  std::string json = renderMemoryTable(c, options);
  EXPECT_TRUE(contains(
      json,
      R"({"startNs":20,"cumulative":[{"module":"/opt/app/liba.so","key":"liba.so","bytes":30},{"module":"/opt/app/libb.so","key":"libb.so","bytes":0}]})"))
      << json;
}

TEST(MemoryReportTest, LeaksShowTheAllocationStack) {
  Capture c = t2();
  c.allocEvents.push_back(alloc('a', 0x5000, 10));
  c.allocEvents.push_back(alloc('a', 0x6000, 10));
  LeakOptions options;
  options.top = 1;
  std::string text = renderLeaks(c, options);
  std::vector<std::string> all = lines(text);
  ASSERT_GE(all.size(), 7u) << text;
  EXPECT_EQ(tokens(all[1]), (Tokens{"80", "B", "1", "realloc", "libb.so"}));
  EXPECT_EQ(tokens(all[2]), (Tokens{"#1", "libb.so!func_b0", "(libb.c:34)"}));
  EXPECT_EQ(tokens(all[3]), (Tokens{"#2", "app!main", "(app.c:56)"}));
  EXPECT_EQ(tokens(all[4]), (Tokens{"#3", "libc.so.6!__libc_start_main"}));
  EXPECT_EQ(tokens(all[5]), (Tokens{"20", "B", "2", "(1", "more)"}));
  EXPECT_EQ(rowEndingWith(text, "total"), (Tokens{"100", "B", "3", "total"}));
}

TEST(MemoryReportTest, StatusCountsHooksEventsAndLiveBlocks) {
  FakeAllocTarget target;
  Capture capture;
  uint64_t now = 0;
  AllocTracker tracker(target, capture, {}, [&] { return ++now; });
  tracker.start();
  target.enter(1001, FakeAllocTarget::kMalloc, 0x7fff0000, {24});
  target.leave(1001, 0x10007, 0x7fff0000, 0x5000);
  target.enter(1001, FakeAllocTarget::kFree, 0x7fff0000, {0x9999});
  std::string text = renderMemoryStatus(tracker);
  EXPECT_TRUE(contains(text, "heap tracking: active\n")) << text;
  // malloc calloc realloc reallocarray free memalign posix_memalign aligned_alloc _Znwm
  // _ZnamRKSt9nothrow_t _ZdlPv; aligned_alloc is memalign's alias, so 10 entries.
  EXPECT_TRUE(contains(text, "hooks: 11 functions (10 entry and 8 exit breakpoints)\n")) << text;
  EXPECT_TRUE(contains(text, "not found: valloc, pvalloc, _ZnwmRKSt9nothrow_t")) << text;
  EXPECT_TRUE(contains(text, "not hooked (where they return is unknown): _Znam\n")) << text;
  EXPECT_TRUE(contains(text, "events: 2; traps: 3; nested calls: 0; failed allocations: 0\n"))
      << text;
  EXPECT_TRUE(contains(text, "live: 24 B in 1 block (peak 24 B); untracked frees: 1\n")) << text;
  tracker.stop();
  EXPECT_TRUE(contains(renderMemoryStatus(tracker), "heap tracking: stopped\n"));
}
