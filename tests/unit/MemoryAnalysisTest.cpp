// Spec 003's test vectors T1-T5 against the heap analysis, on hand-built captures. Every expected
// number is the spec's own (worked out there by hand), or worked out here in the comments.
#include "analysis/memory/MemoryAnalysis.h"

#include <gtest/gtest.h>

using namespace strobe;

namespace {

constexpr uint64_t kExe = 0x400000, kLibA = 0x7f0000100000, kLibB = 0x7f0000200000,
                   kLibc = 0x7f0000300000, kLibstdcxx = 0x7f0000600000;

// Frame addresses: an allocator entry, then return addresses inside each function.
constexpr uint64_t kMallocPc = kLibc + 0x1000, kFreePc = kLibc + 0x2000,
                   kReallocPc = kLibc + 0x3000, kMemalignPc = kLibc + 0x4000;
constexpr uint64_t kInFuncB0 = kLibB + 0x120, kInFuncA1 = kLibA + 0x220, kInFuncA0 = kLibA + 0x330,
                   kInFunc0 = kExe + 0x1140, kInMain = kExe + 0x1250,
                   kInLibcStartMain = kLibc + 0x29d90, kInStart = kExe + 0x1025,
                   kInOperatorNew = kLibstdcxx + 0x519, kInStartThread = kLibc + 0x94ac3,
                   kInClone3 = kLibc + 0x126850, kInWorker = kExe + 0x1360;

Capture baseCapture() {
  Capture c;
  c.header.program = "/opt/app/app";
  c.modules = {
      {"/opt/app/app", "", kExe, kExe + 0x10000, 0},
      {"/opt/app/liba.so", "", kLibA, kLibA + 0x10000, kLibA},
      {"/opt/app/libb.so", "", kLibB, kLibB + 0x10000, kLibB},
      {"/lib/x86_64-linux-gnu/libc.so.6", "", kLibc, kLibc + 0x200000, kLibc},
      {"/lib/x86_64-linux-gnu/libstdc++.so.6", "", kLibstdcxx, kLibstdcxx + 0x1000, kLibstdcxx}};
  auto fn = [&](uint64_t at, const char *name) { c.symbols[at] = {name, 0, 0, "", 0, {}}; };
  fn(kMallocPc, "malloc");
  fn(kFreePc, "free");
  fn(kReallocPc, "realloc");
  fn(kMemalignPc, "memalign");
  fn(kInFuncB0, "func_b0");
  fn(kInFuncA1, "func_a1");
  fn(kInFuncA0, "func_a0");
  fn(kInFunc0, "func_0");
  fn(kInMain, "main");
  fn(kInLibcStartMain, "__libc_start_main");
  fn(kInStart, "_start");
  fn(kInOperatorNew, "operator new(unsigned long)");
  fn(kInStartThread, "start_thread");
  fn(kInClone3, "clone3");
  fn(kInWorker, "worker");
  return c;
}

// Spec 003's 8-frame example stack.
const std::vector<uint64_t> kSpecStack = {kMallocPc, kInFuncB0, kInFuncA1,        kInFuncA0,
                                          kInFunc0,  kInMain,   kInLibcStartMain, kInStart};

std::vector<std::string> labels(const Capture &c, KeyBy by, AttributionMode mode,
                                std::vector<uint64_t> stack) {
  AttributionOptions options;
  options.by = by;
  options.mode = mode;
  Attributor attributor(c, options);
  AllocEvent e;
  e.stack = std::move(stack);
  std::vector<std::string> out;
  for (KeyId id : attributor.keysOf(e)) {
    const MemoryKey &k = attributor.key(id);
    std::string module = k.module.substr(k.module.rfind('/') + 1);
    out.push_back(k.function.empty() ? module : module + "!" + k.function);
  }
  std::sort(out.begin(), out.end());
  return out;
}

using Names = std::vector<std::string>;

// Events of T2-T4 happen "in liba" or "in libb": the allocator's caller is that library's code.
std::vector<uint64_t> inLib(char lib, uint64_t allocatorPc) {
  return {allocatorPc, lib == 'a' ? kInFuncA0 : kInFuncB0, kInMain, kInLibcStartMain};
}

AllocEvent alloc(char lib, AllocFunction f, uint64_t pointer, uint64_t size, uint64_t t = 0) {
  AllocEvent e;
  e.timeNs = t;
  e.tid = 1;
  e.function = f;
  e.pointer = pointer;
  e.size = size;
  e.stack = inLib(lib, f == AllocFunction::Memalign ? kMemalignPc : kMallocPc);
  return e;
}

AllocEvent release(char lib, uint64_t pointer, uint64_t t = 0) {
  AllocEvent e;
  e.timeNs = t;
  e.tid = 1;
  e.function = AllocFunction::Free;
  e.previous = pointer;
  e.stack = inLib(lib, kFreePc);
  return e;
}

AllocEvent resize(char lib, uint64_t previous, uint64_t pointer, uint64_t size) {
  AllocEvent e;
  e.tid = 1;
  e.function = AllocFunction::Realloc;
  e.previous = previous;
  e.pointer = pointer;
  e.size = size;
  e.stack = inLib(lib, kReallocPc);
  return e;
}

const HeapUsage &usageOf(const UsageTable &t, const std::string &fileName) {
  for (const KeyUsage &row : t.rows)
    if (t.keys[row.key].module.ends_with("/" + fileName))
      return row.usage;
  throw std::runtime_error("no row for " + fileName);
}

std::string fileOf(const std::vector<MemoryKey> &keys, KeyId id) {
  return keys[id].module.substr(keys[id].module.rfind('/') + 1);
}

constexpr uint64_t P1 = 0x1000, P2 = 0x2000, P3 = 0x3000, P4 = 0x4000;

Capture t2Capture() {
  Capture c = baseCapture();
  c.allocEvents = {alloc('a', AllocFunction::Malloc, P1, 100),
                   alloc('b', AllocFunction::Malloc, P2, 50),
                   alloc('a', AllocFunction::Memalign, P3, 200),
                   release('b', P1),
                   resize('b', P2, P4, 80),
                   release('a', P3),
                   release('a', 0)};
  return c;
}

} // namespace

// --- T1: attribution modes on the 8-frame stack ---

TEST(MemoryAttributionTest, T1FirstLibraryCalledFromMain) {
  Capture c = baseCapture();
  EXPECT_EQ(labels(c, KeyBy::Library, AttributionMode::First, kSpecStack), Names{"liba.so"});
  EXPECT_EQ(labels(c, KeyBy::Function, AttributionMode::First, kSpecStack),
            Names{"liba.so!func_a0"});
}

TEST(MemoryAttributionTest, T1LastCaller) {
  Capture c = baseCapture();
  EXPECT_EQ(labels(c, KeyBy::Library, AttributionMode::Last, kSpecStack), Names{"libb.so"});
  EXPECT_EQ(labels(c, KeyBy::Function, AttributionMode::Last, kSpecStack),
            Names{"libb.so!func_b0"});
}

TEST(MemoryAttributionTest, T1AllLibrariesOnThePathEachOnce) {
  Capture c = baseCapture();
  EXPECT_EQ(labels(c, KeyBy::Library, AttributionMode::All, kSpecStack),
            (Names{"liba.so", "libb.so"}));
  EXPECT_EQ(labels(c, KeyBy::Function, AttributionMode::All, kSpecStack),
            (Names{"liba.so!func_a0", "liba.so!func_a1", "libb.so!func_b0"}));
}

TEST(MemoryAttributionTest, AnAllocationMadeByTheExecutableIsTheExecutables) {
  Capture c = baseCapture();
  std::vector<uint64_t> stack = {kMallocPc, kInFunc0, kInMain, kInLibcStartMain, kInStart};
  for (AttributionMode mode :
       {AttributionMode::First, AttributionMode::Last, AttributionMode::All}) {
    EXPECT_EQ(labels(c, KeyBy::Library, mode, stack), Names{"app"});
    EXPECT_EQ(labels(c, KeyBy::Function, mode, stack), Names{"app!func_0"});
  }
}

TEST(MemoryAttributionTest, OperatorNewIsTransparent) {
  Capture c = baseCapture();
  std::vector<uint64_t> stack = {kMallocPc, kInOperatorNew, kInMain, kInLibcStartMain};
  EXPECT_EQ(labels(c, KeyBy::Library, AttributionMode::Last, stack), Names{"app"});
  EXPECT_EQ(labels(c, KeyBy::Function, AttributionMode::First, stack), Names{"app!main"});

  // With an empty transparent list, libstdc++ is the last caller.
  AttributionOptions options;
  options.mode = AttributionMode::Last;
  options.transparent.clear();
  Attributor attributor(c, options);
  AllocEvent e;
  e.stack = stack;
  EXPECT_EQ(attributor.key(attributor.keysOf(e).at(0)).module,
            "/lib/x86_64-linux-gnu/libstdc++.so.6");
}

TEST(MemoryAttributionTest, UserTransparentEntryNamesModuleAndFunction) {
  Capture c = baseCapture();
  AttributionOptions options;
  options.mode = AttributionMode::Last;
  options.transparent = {"libb.so!func_b0"};
  Attributor attributor(c, options);
  AllocEvent e;
  e.stack = kSpecStack;
  EXPECT_EQ(attributor.key(attributor.keysOf(e).at(0)).module, "/opt/app/liba.so");
}

TEST(MemoryAttributionTest, AThreadsWalkStopsBelowItsStartRoutine) {
  Capture c = baseCapture();
  std::vector<uint64_t> stack = {kMallocPc, kInFuncB0, kInWorker, kInStartThread, kInClone3};
  EXPECT_EQ(labels(c, KeyBy::Library, AttributionMode::First, stack), Names{"libb.so"});
  EXPECT_EQ(labels(c, KeyBy::Library, AttributionMode::All, stack), Names{"libb.so"});
  std::vector<uint64_t> direct = {kMallocPc, kInWorker, kInStartThread, kInClone3};
  EXPECT_EQ(labels(c, KeyBy::Function, AttributionMode::First, direct), Names{"app!worker"});
}

TEST(MemoryAttributionTest, ReturnAddressesAreClassifiedAtPcMinusOne) {
  Capture c = baseCapture();
  // A call that is the last instruction of liba returns to the first address past liba's end.
  uint64_t pastLibA = kLibA + 0x10000;
  c.symbols[pastLibA] = {"func_tail", 0, 0, "", 0, {}};
  std::vector<uint64_t> stack = {kMallocPc, pastLibA, kInMain};
  EXPECT_EQ(labels(c, KeyBy::Library, AttributionMode::Last, stack), Names{"liba.so"});
}

TEST(MemoryAttributionTest, ThreadKeysAreTheEventsThread) {
  Capture c = baseCapture();
  AttributionOptions options;
  options.by = KeyBy::Thread;
  Attributor attributor(c, options);
  AllocEvent e;
  e.tid = 4242;
  e.stack = kSpecStack;
  EXPECT_EQ(attributor.key(attributor.keysOf(e).at(0)).tid, 4242u);
}

// --- T2: call-site and owner mode ---

TEST(MemoryTableTest, T2CallSiteMode) {
  Capture c = t2Capture();
  UsageTable t = usageByKey(c, {});
  ASSERT_EQ(t.rows.size(), 2u);
  const HeapUsage &a = usageOf(t, "liba.so");
  EXPECT_EQ(a.size, 100);
  EXPECT_EQ(a.minimum, 0);
  EXPECT_EQ(a.maximum, 300);
  EXPECT_EQ(a.mallocCalls, 1u);
  EXPECT_EQ(a.reallocCalls, 0u);
  EXPECT_EQ(a.freeCalls, 2u);
  EXPECT_EQ(a.memalignCalls, 1u);
  const HeapUsage &b = usageOf(t, "libb.so");
  EXPECT_EQ(b.size, -20);
  EXPECT_EQ(b.minimum, -50);
  EXPECT_EQ(b.maximum, 50);
  EXPECT_EQ(b.mallocCalls, 1u);
  EXPECT_EQ(b.reallocCalls, 1u);
  EXPECT_EQ(b.freeCalls, 1u);
  EXPECT_EQ(b.memalignCalls, 0u);
  // 100 + (-20) = 80 = the live bytes: only P4 is live.
  EXPECT_EQ(t.total.size, 80);
  EXPECT_EQ(t.total.liveBytes, 80);
  EXPECT_EQ(t.total.liveBlocks, 1);
  // Gross: allocated 100 + 50 + 200 + 80 = 430; freed 100 + 50 + 200 = 350.
  EXPECT_EQ(t.total.allocatedBytes, 430u);
  EXPECT_EQ(t.total.freedBytes, 350u);
  // Live figures are the allocating unit's in either mode: libb owns P4.
  EXPECT_EQ(a.liveBytes, 0);
  EXPECT_EQ(a.peakLiveBytes, 300);
  EXPECT_EQ(b.liveBytes, 80);
  EXPECT_EQ(b.liveBlocks, 1);
  EXPECT_EQ(a.freedBytes, 200u) << "call-site: liba freed P3";
  EXPECT_EQ(b.freedBytes, 150u) << "call-site: libb freed P1 and realloc released P2";
}

TEST(MemoryTableTest, T2OwnerMode) {
  Capture c = t2Capture();
  MemoryAnalysisOptions options;
  options.frees = FreesMode::Owner;
  UsageTable t = usageByKey(c, options);
  const HeapUsage &a = usageOf(t, "liba.so");
  EXPECT_EQ(a.size, 0);
  EXPECT_EQ(a.maximum, 300);
  EXPECT_EQ(a.minimum, 0);
  const HeapUsage &b = usageOf(t, "libb.so");
  EXPECT_EQ(b.size, 80);
  EXPECT_EQ(b.maximum, 80);
  EXPECT_EQ(b.minimum, 0);
  EXPECT_EQ(a.freedBytes, 300u) << "owner: P1 and P3 were liba's";
  EXPECT_EQ(b.freedBytes, 50u);
  EXPECT_EQ(b.freeCalls, 1u) << "calls stay with the code that made them";
  EXPECT_EQ(t.total.size, 80);
}

TEST(MemoryTableTest, AllAttributionChargesEveryLibraryOnThePath) {
  Capture c = baseCapture();
  AllocEvent e;
  e.function = AllocFunction::Malloc;
  e.pointer = P1;
  e.size = 64;
  e.stack = kSpecStack;
  c.allocEvents = {e};
  MemoryAnalysisOptions options;
  options.attribution.mode = AttributionMode::All;
  UsageTable t = usageByKey(c, options);
  EXPECT_EQ(usageOf(t, "liba.so").size, 64);
  EXPECT_EQ(usageOf(t, "libb.so").size, 64);
  EXPECT_EQ(t.total.size, 64) << "the total counts the event once";
}

// --- T3: per invocation ---

TEST(MemoryTableTest, T3PerInvocation) {
  Capture c = baseCapture();
  constexpr uint64_t Q1 = 0x11, Q2 = 0x12, Q3 = 0x13, Q4 = 0x14;
  c.allocEvents = {
      alloc('a', AllocFunction::Malloc, Q1, 10), alloc('a', AllocFunction::Malloc, Q2, 20),
      alloc('b', AllocFunction::Malloc, Q3, 5),  release('a', Q1),
      alloc('b', AllocFunction::Malloc, Q4, 7),  release('b', Q3)};
  InvocationTable t = usageByInvocation(c, {});
  struct Expected {
    const char *key;
    int64_t size, min, max;
    uint64_t malloc, free;
  };
  const Expected expected[] = {{"liba.so", 30, 0, 30, 2, 0},
                               {"libb.so", 5, 0, 5, 1, 0},
                               {"liba.so", -10, -10, 0, 0, 1},
                               {"libb.so", 2, 0, 7, 1, 1}};
  ASSERT_EQ(t.rows.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(t.rows[i].keys.size(), 1u);
    EXPECT_EQ(fileOf(t.keys, t.rows[i].keys[0]), expected[i].key);
    EXPECT_EQ(t.rows[i].usage.size, expected[i].size);
    EXPECT_EQ(t.rows[i].usage.minimum, expected[i].min);
    EXPECT_EQ(t.rows[i].usage.maximum, expected[i].max);
    EXPECT_EQ(t.rows[i].usage.mallocCalls, expected[i].malloc);
    EXPECT_EQ(t.rows[i].usage.freeCalls, expected[i].free);
  }

  // Without per-invocation rows: liba 20 / 0 / 30, malloc 2, free 1; libb 7 / 0 / 12, 2, 1.
  UsageTable whole = usageByKey(c, {});
  const HeapUsage &a = usageOf(whole, "liba.so");
  EXPECT_EQ(a.size, 20);
  EXPECT_EQ(a.minimum, 0);
  EXPECT_EQ(a.maximum, 30);
  EXPECT_EQ(a.mallocCalls, 2u);
  EXPECT_EQ(a.freeCalls, 1u);
  const HeapUsage &b = usageOf(whole, "libb.so");
  EXPECT_EQ(b.size, 7);
  EXPECT_EQ(b.minimum, 0);
  EXPECT_EQ(b.maximum, 12);
  EXPECT_EQ(b.mallocCalls, 2u);
  EXPECT_EQ(b.freeCalls, 1u);
}

// --- T4: intervals of 10 time units, cumulative usage at each block end ---

TEST(MemoryTableTest, T4IntervalsWithCumulativeUsage) {
  Capture c = baseCapture();
  constexpr uint64_t R1 = 0x21, R2 = 0x22, R3 = 0x23;
  c.allocEvents = {alloc('a', AllocFunction::Malloc, R1, 100, 1),
                   alloc('b', AllocFunction::Malloc, R2, 40, 4), release('a', R1, 12),
                   alloc('a', AllocFunction::Malloc, R3, 30, 15), release('b', R2, 27)};
  IntervalTable t = usageByInterval(c, {}, 10);
  ASSERT_EQ(t.blocks.size(), 3u);

  auto row = [&](const IntervalBlock &block, const char *key) -> const HeapUsage & {
    for (const KeyUsage &r : block.rows)
      if (fileOf(t.keys, r.key) == key)
        return r.usage;
    throw std::runtime_error(std::string("no row for ") + key);
  };
  auto cumulative = [&](const IntervalBlock &block) {
    std::map<std::string, int64_t> out;
    for (const auto &[key, bytes] : block.cumulative)
      out[fileOf(t.keys, key)] = bytes;
    return out;
  };
  using Cumulative = std::map<std::string, int64_t>;

  // [0, 10): liba 100 / 0 / 100, malloc 1; libb 40 / 0 / 40, malloc 1.
  const IntervalBlock &b0 = t.blocks[0];
  EXPECT_EQ(b0.startNs, 0u);
  ASSERT_EQ(b0.rows.size(), 2u);
  EXPECT_EQ(row(b0, "liba.so").size, 100);
  EXPECT_EQ(row(b0, "liba.so").minimum, 0);
  EXPECT_EQ(row(b0, "liba.so").maximum, 100);
  EXPECT_EQ(row(b0, "liba.so").mallocCalls, 1u);
  EXPECT_EQ(row(b0, "libb.so").size, 40);
  EXPECT_EQ(row(b0, "libb.so").maximum, 40);
  EXPECT_EQ(row(b0, "libb.so").mallocCalls, 1u);
  EXPECT_EQ(cumulative(b0), (Cumulative{{"liba.so", 100}, {"libb.so", 40}}));

  // [10, 20): liba -70 / -100 / 0, malloc 1, free 1.
  const IntervalBlock &b1 = t.blocks[1];
  EXPECT_EQ(b1.startNs, 10u);
  ASSERT_EQ(b1.rows.size(), 1u);
  EXPECT_EQ(row(b1, "liba.so").size, -70);
  EXPECT_EQ(row(b1, "liba.so").minimum, -100);
  EXPECT_EQ(row(b1, "liba.so").maximum, 0);
  EXPECT_EQ(row(b1, "liba.so").mallocCalls, 1u);
  EXPECT_EQ(row(b1, "liba.so").freeCalls, 1u);
  EXPECT_EQ(cumulative(b1), (Cumulative{{"liba.so", 30}, {"libb.so", 40}}));

  // [20, 30): libb -40 / -40 / 0, free 1.
  const IntervalBlock &b2 = t.blocks[2];
  EXPECT_EQ(b2.startNs, 20u);
  ASSERT_EQ(b2.rows.size(), 1u);
  EXPECT_EQ(row(b2, "libb.so").size, -40);
  EXPECT_EQ(row(b2, "libb.so").minimum, -40);
  EXPECT_EQ(row(b2, "libb.so").maximum, 0);
  EXPECT_EQ(row(b2, "libb.so").freeCalls, 1u);
  EXPECT_EQ(cumulative(b2), (Cumulative{{"liba.so", 30}, {"libb.so", 0}}));
}

TEST(MemoryTableTest, EmptyWindowsAreSkipped) {
  Capture c = baseCapture();
  c.allocEvents = {alloc('a', AllocFunction::Malloc, P1, 8, 5),
                   alloc('a', AllocFunction::Malloc, P2, 8, 95)};
  IntervalTable t = usageByInterval(c, {}, 10);
  ASSERT_EQ(t.blocks.size(), 2u);
  EXPECT_EQ(t.blocks[1].startNs, 90u);
  EXPECT_EQ(t.blocks[1].cumulative.at(0).second, 16);
}

// --- T5: edge cases ---

TEST(MemoryTableTest, T5EdgeCases) {
  Capture c = baseCapture();
  constexpr uint64_t S1 = 0x51, S2 = 0x52, S3 = 0x53, Unknown = 0x99;
  c.allocEvents = {
      alloc('a', AllocFunction::Malloc, S1, 0), // malloc(0) non-NULL: counted, +0
      release('a', 0),                          // free(NULL): counted, 0
      resize('a', 0, S2, 64),                   // realloc(NULL, 64): a realloc, +64
      resize('a', S2, 0, 0),                    // realloc(S2, 0) -> NULL: a free of S2
      release('a', Unknown),                    // never seen: untracked
      resize('a', Unknown + 1, S3, 10),         // realloc of a pointer never seen: untracked, +10
  };
  UsageTable t = usageByKey(c, {});
  const HeapUsage &a = usageOf(t, "liba.so");
  EXPECT_EQ(a.mallocCalls, 1u);
  EXPECT_EQ(a.freeCalls, 3u) << "free(NULL), realloc(p, 0) and the untracked free";
  EXPECT_EQ(a.reallocCalls, 2u);
  EXPECT_EQ(a.untrackedFrees, 2u);
  // 0 + 0 + 64 - 64 + 0 + 10
  EXPECT_EQ(a.size, 10);
  EXPECT_EQ(a.maximum, 64);
  EXPECT_EQ(a.liveBlocks, 2) << "malloc(0)'s block and S3";
  EXPECT_EQ(a.liveBytes, 10);
}

TEST(MemoryTableTest, SplitReallocReplaysTheReleaseBeforeTheOtherThreadsAllocation) {
  Capture c = baseCapture();
  AllocEvent early = resize('a', P1, 0, 0);
  early.part = EventPart::ReleasePart;
  AllocEvent late = resize('a', 0, P2, 200);
  late.part = EventPart::ResultPart;
  c.allocEvents = {alloc('a', AllocFunction::Malloc, P1, 100), early,
                   alloc('b', AllocFunction::Malloc, P1, 50), late};
  UsageTable t = usageByKey(c, {});
  const HeapUsage &a = usageOf(t, "liba.so");
  EXPECT_EQ(a.size, 200); // 100 - 100 + 200
  EXPECT_EQ(a.reallocCalls, 1u) << "one realloc call, stored as two events";
  EXPECT_EQ(a.freeCalls, 0u);
  EXPECT_EQ(usageOf(t, "libb.so").liveBytes, 50);
  EXPECT_EQ(t.total.liveBytes, 250);
  EXPECT_EQ(t.total.untrackedFrees, 0u);
}

// --- mappings ---

TEST(HeapLedgerTest, MappingsArePagesAndPartialUnmapsSplitThem) {
  HeapLedger ledger;
  AllocEvent map;
  map.function = AllocFunction::Mmap;
  map.pointer = 0x100000;
  map.size = 3 * 4096 - 100; // three pages
  HeapEffect created = ledger.apply(map, 0);
  EXPECT_EQ(created.createdBytes, 3u * 4096);

  AllocEvent middle;
  middle.function = AllocFunction::Munmap;
  middle.previous = 0x101000;
  middle.previousSize = 4096;
  HeapEffect cut = ledger.apply(middle, 1);
  ASSERT_EQ(cut.released.size(), 1u);
  EXPECT_EQ(cut.released[0].bytes, 4096u);
  EXPECT_EQ(cut.released[0].ownerEvent, 0u);
  EXPECT_FALSE(cut.released[0].whole);
  EXPECT_EQ(ledger.liveBytes(), 2u * 4096);
  EXPECT_EQ(ledger.regions().size(), 2u);

  AllocEvent foreign; // a file mapping nobody tracked
  foreign.function = AllocFunction::Munmap;
  foreign.previous = 0x900000;
  foreign.previousSize = 4096;
  HeapEffect none = ledger.apply(foreign, 2);
  EXPECT_TRUE(none.released.empty());
  EXPECT_FALSE(none.untracked);

  AllocEvent all; // one munmap across both pieces and the hole
  all.function = AllocFunction::Munmap;
  all.previous = 0x100000;
  all.previousSize = 3 * 4096;
  HeapEffect rest = ledger.apply(all, 3);
  EXPECT_EQ(rest.released.size(), 2u);
  EXPECT_EQ(rest.delta(), -2 * 4096);
  EXPECT_EQ(ledger.liveBytes(), 0u);
  EXPECT_EQ(ledger.peakLiveBytes(), 3u * 4096);
}

// --- leaks ---

TEST(MemoryLeaksTest, LiveBlocksGroupedByAllocationStackMostBytesFirst) {
  Capture c = t2Capture();
  c.allocEvents.push_back(alloc('a', AllocFunction::Malloc, 0x5000, 10));
  c.allocEvents.push_back(alloc('a', AllocFunction::Malloc, 0x6000, 10));
  LeakTable t = liveBlocksByStack(c, {});
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[0].bytes, 80u) << "P4, from libb's realloc";
  EXPECT_EQ(t.groups[0].function, AllocFunction::Realloc);
  EXPECT_EQ(t.groups[0].blocks, 1u);
  EXPECT_EQ(fileOf(t.keys, t.groups[0].keys.at(0)), "libb.so");
  EXPECT_EQ(t.groups[1].bytes, 20u);
  EXPECT_EQ(t.groups[1].blocks, 2u);
  EXPECT_EQ(t.bytes, 100u);
  EXPECT_EQ(t.blocks, 3u);
}
