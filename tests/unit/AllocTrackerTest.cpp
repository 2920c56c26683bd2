// AllocTracker against FakeAllocTarget's hand-assembled allocator: where breakpoints go, and the
// events that simulated entries and exits produce. Every address and expected event follows from
// the layout written out in FakeAllocTarget.h.
#include "FakeAllocTarget.h"

#include "capture/AllocTracker.h"

#include <gtest/gtest.h>

using namespace strobe;
using strobe::testing::FakeAllocTarget;

namespace {

constexpr uint64_t kT1 = 1001, kT2 = 1002;
constexpr uint64_t kSp = 0x7fff0000;
constexpr uint64_t kCaller = 0x401010, kCallerOfCaller = 0x401200;

struct AllocTrackerTest : ::testing::Test {
  FakeAllocTarget target;
  Capture capture;
  uint64_t now = 0;
  std::unique_ptr<AllocTracker> tracker;

  void start(AllocTrackerOptions options = {}) {
    tracker = std::make_unique<AllocTracker>(target, capture, options, [this] { return ++now; });
    tracker->start();
  }

  const std::vector<AllocEvent> &events() const { return capture.allocEvents; }
};

std::set<uint64_t> keysOf(const std::map<uint64_t, BreakpointHandler> &breakpoints) {
  std::set<uint64_t> keys;
  for (const auto &[address, handler] : breakpoints)
    keys.insert(address);
  return keys;
}

} // namespace

TEST_F(AllocTrackerTest, PlantsEntriesAndEveryExitFoundByDisassembly) {
  start();
  using F = FakeAllocTarget;
  std::set<uint64_t> expected = {
      // entries (aligned_alloc is memalign's alias; _Znam has no size and is not hooked)
      F::kMalloc, F::kFree, F::kRealloc, F::kCalloc, F::kNew, F::kDelete, F::kPosixMemalign,
      F::kMemalign, F::kReallocArray, F::kNewArrayNothrow,
      // exits: malloc's two rets, realloc's ret, calloc's ret and its tail jump to memset,
      // operator new's ret, posix_memalign's, and _mid_memalign's (memalign's tail jump)
      0x10007, 0x10009, 0x10209, 0x1030a, 0x10305, 0x1040d, 0x10602, 0x10802};
  EXPECT_EQ(keysOf(target.breakpoints), expected);
  EXPECT_EQ(tracker->stats().entryBreakpoints, 10u);
  EXPECT_EQ(tracker->stats().exitBreakpoints, 8u);
  EXPECT_EQ(tracker->stats().unscannable, std::vector<std::string>{"_Znam"});
  std::vector<std::string> notFound = tracker->stats().notFound;
  EXPECT_NE(std::find(notFound.begin(), notFound.end(), "pvalloc"), notFound.end());
  EXPECT_EQ(std::find(notFound.begin(), notFound.end(), "aligned_alloc"), notFound.end());
  EXPECT_FALSE(target.breakpoints.count(0x10e03)) << "memset's own ret must never trap";
}

TEST_F(AllocTrackerTest, ScannerFollowsTailJumpsThroughPltStubs) {
  ExitScanner scanner(target, Isa::X86_64);
  ExitSites sites = scanner.scan(FakeAllocTarget::kReallocArray).value();
  // reallocarray -> realloc@plt -> realloc -> (je) malloc
  EXPECT_EQ(sites.returns, (std::vector<uint64_t>{0x10007, 0x10009, 0x10209}));
  EXPECT_EQ(sites.tailEntries,
            (std::set<uint64_t>{FakeAllocTarget::kRealloc, FakeAllocTarget::kMalloc}));
  EXPECT_TRUE(sites.firstArgumentExits.empty());
  EXPECT_FALSE(sites.unresolvedExits);

  ExitSites calloc = scanner.scan(FakeAllocTarget::kCalloc).value();
  EXPECT_EQ(calloc.returns, std::vector<uint64_t>{0x1030a});
  EXPECT_EQ(calloc.firstArgumentExits, std::vector<uint64_t>{0x10305});

  EXPECT_FALSE(scanner.scan(FakeAllocTarget::kNewArray)) << "its only byte does not decode";
}

TEST_F(AllocTrackerTest, WithoutSymbolSizesTheScanFollowsTheCodeFromTheEntry) {
  // A libc without debug info: _mid_memalign has no size, memset's variant no symbol at all
  // (the nearest one below it is _Znam's, which does not start there).
  target.symbolTable[FakeAllocTarget::kMidMemalign].size = 0;
  target.symbolTable.erase(FakeAllocTarget::kMemset);
  ExitScanner scanner(target, Isa::X86_64);
  EXPECT_EQ(scanner.scan(FakeAllocTarget::kMemalign).value().returns,
            std::vector<uint64_t>{0x10802});

  // calloc's tail jump into an unnamed function is its memset: the call ends at the jump.
  ExitSites calloc = scanner.scan(FakeAllocTarget::kCalloc, true).value();
  EXPECT_EQ(calloc.firstArgumentExits, std::vector<uint64_t>{0x10305});
  EXPECT_EQ(calloc.returns, std::vector<uint64_t>{0x1030a});
  // Any other function's tail jump there is followed to that function's ret.
  ExitSites other = scanner.scan(FakeAllocTarget::kCalloc, false).value();
  EXPECT_TRUE(other.firstArgumentExits.empty());
  EXPECT_EQ(other.returns, (std::vector<uint64_t>{0x1030a, 0x10e03}));
  EXPECT_EQ(other.tailEntries, std::set<uint64_t>{FakeAllocTarget::kMemset});
}

TEST_F(AllocTrackerTest, AnAllocationIsRecordedAtItsExitWithTheStackFromItsEntry) {
  start();
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {24});
  EXPECT_TRUE(events().empty()) << "nothing is known before the return";
  target.leave(kT1, 0x10009, kSp, 0x5000);
  ASSERT_EQ(events().size(), 1u);
  const AllocEvent &e = events()[0];
  EXPECT_EQ(e.function, AllocFunction::Malloc);
  EXPECT_EQ(e.tid, kT1);
  EXPECT_EQ(e.pointer, 0x5000u);
  EXPECT_EQ(e.size, 24u);
  EXPECT_EQ(e.previous, 0u);
  EXPECT_EQ(e.timeNs, 1u) << "stamped once, at the exit";
  EXPECT_EQ(e.stack, (std::vector<uint64_t>{FakeAllocTarget::kMalloc, kCaller, kCallerOfCaller}));
  EXPECT_EQ(tracker->stats().traps, 2u);
  EXPECT_EQ(tracker->ledger().liveBytes(), 24u);
}

TEST_F(AllocTrackerTest, OperatorNewCallingMallocIsOneEvent) {
  start();
  target.enter(kT1, FakeAllocTarget::kNew, kSp, {40});
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp - 16, {40}, {0x10409});
  target.leave(kT1, 0x10009, kSp - 16, 0x6000); // malloc's ret, deeper: not new's exit
  EXPECT_TRUE(events().empty());
  target.leave(kT1, 0x1040d, kSp, 0x6000);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::New);
  EXPECT_EQ(events()[0].pointer, 0x6000u);
  EXPECT_EQ(events()[0].size, 40u);
  EXPECT_EQ(tracker->stats().nestedCalls, 1u);
  EXPECT_EQ(tracker->stats().traps, 4u);
}

TEST_F(AllocTrackerTest, FreeIsRecordedAtEntryAndDeleteCallingFreeIsOneEvent) {
  start();
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {0x5000});
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::Free);
  EXPECT_EQ(events()[0].previous, 0x5000u);
  EXPECT_EQ(events()[0].pointer, 0u);

  // operator delete tail-jumps to free: free's entry comes at the same stack pointer.
  target.enter(kT1, FakeAllocTarget::kDelete, kSp, {0x6000});
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {0x6000});
  ASSERT_EQ(events().size(), 2u);
  EXPECT_EQ(events()[1].function, AllocFunction::Delete);
  EXPECT_EQ(events()[1].previous, 0x6000u);
  EXPECT_EQ(tracker->stats().nestedCalls, 1u);

  // A later free of another block is a free again.
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {0x7000});
  ASSERT_EQ(events().size(), 3u);
  EXPECT_EQ(events()[2].previous, 0x7000u);
  EXPECT_EQ(tracker->stats().traps, 4u) << "one trap per free";
}

TEST_F(AllocTrackerTest, ReallocSuccessFailureAndReallocToZero) {
  start();
  target.enter(kT1, FakeAllocTarget::kRealloc, kSp, {0x5000, 100});
  target.leave(kT1, 0x10209, kSp, 0x7000);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::Realloc);
  EXPECT_EQ(events()[0].previous, 0x5000u);
  EXPECT_EQ(events()[0].pointer, 0x7000u);
  EXPECT_EQ(events()[0].size, 100u);
  EXPECT_EQ(events()[0].part, EventPart::Whole);

  // Failed: NULL for a non-zero size changes nothing and records nothing.
  target.enter(kT1, FakeAllocTarget::kRealloc, kSp, {0x7000, uint64_t{1} << 50});
  target.leave(kT1, 0x10209, kSp, 0);
  EXPECT_EQ(events().size(), 1u);
  EXPECT_EQ(tracker->stats().failedCalls, 1u);

  // realloc(p, 0): glibc frees p (a nested free, not counted) and returns NULL.
  target.enter(kT1, FakeAllocTarget::kRealloc, kSp, {0x7000, 0});
  target.enter(kT1, FakeAllocTarget::kFree, kSp - 32, {0x7000}, {0x10208});
  target.leave(kT1, 0x10209, kSp, 0);
  ASSERT_EQ(events().size(), 2u);
  EXPECT_EQ(events()[1].previous, 0x7000u);
  EXPECT_EQ(events()[1].pointer, 0u);
  EXPECT_EQ(countedCall(events()[1]), CallClass::Free);
  EXPECT_EQ(tracker->ledger().liveBytes(), 0u);
}

TEST_F(AllocTrackerTest, ReallocOfNullEndsInMallocsReturnThroughItsTailJump) {
  start();
  // realloc(NULL, 64) jumps to malloc, which returns with realloc's entry stack pointer.
  target.enter(kT1, FakeAllocTarget::kRealloc, kSp, {0, 64});
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {64});
  target.leave(kT1, 0x10007, kSp, 0x8000);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::Realloc);
  EXPECT_EQ(events()[0].previous, 0u);
  EXPECT_EQ(events()[0].pointer, 0x8000u);
  EXPECT_EQ(events()[0].size, 64u);
  EXPECT_EQ(countedCall(events()[0]), CallClass::Realloc);
}

TEST_F(AllocTrackerTest, ReallocArrayThroughItsPltStub) {
  start();
  target.enter(kT1, FakeAllocTarget::kReallocArray, kSp, {0, 8, 16});
  target.enter(kT1, FakeAllocTarget::kRealloc, kSp, {0, 128});
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {128});
  target.leave(kT1, 0x10009, kSp, 0x9000);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::ReallocArray);
  EXPECT_EQ(events()[0].size, 128u);
  EXPECT_EQ(tracker->stats().nestedCalls, 2u);

  // n x size overflows: reallocarray fails without touching anything.
  target.enter(kT1, FakeAllocTarget::kReallocArray, kSp,
               {0x9000, uint64_t{1} << 33, uint64_t{1} << 33});
  target.leave(kT1, 0x10209, kSp, 0);
  EXPECT_EQ(events().size(), 1u);
}

TEST_F(AllocTrackerTest, ReallocInFlightWhoseOldBlockAnotherThreadReceives) {
  start();
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {32});
  target.leave(kT1, 0x10007, kSp, 0x5000);
  // T1's realloc moves the block and frees 0x5000; T2's malloc gets 0x5000 before T1 returns.
  target.enter(kT1, FakeAllocTarget::kRealloc, kSp, {0x5000, 4096});
  target.enter(kT2, FakeAllocTarget::kMalloc, kSp + 0x100000, {16});
  target.leave(kT2, 0x10009, kSp + 0x100000, 0x5000);
  target.leave(kT1, 0x10209, kSp, 0xa000);
  ASSERT_EQ(events().size(), 4u);
  EXPECT_EQ(events()[1].tid, kT1);
  EXPECT_EQ(events()[1].part, EventPart::ReleasePart);
  EXPECT_EQ(events()[1].previous, 0x5000u);
  EXPECT_EQ(events()[2].tid, kT2);
  EXPECT_EQ(events()[2].pointer, 0x5000u);
  EXPECT_EQ(events()[3].tid, kT1);
  EXPECT_EQ(events()[3].part, EventPart::ResultPart);
  EXPECT_EQ(events()[3].pointer, 0xa000u);
  EXPECT_EQ(events()[3].size, 4096u);
  EXPECT_EQ(events()[3].previous, 0u);
  EXPECT_EQ(tracker->stats().splitCalls, 1u);
  // Live: T2's 16 bytes at 0x5000 and T1's 4096 at 0xa000; nothing untracked.
  EXPECT_EQ(tracker->ledger().liveBytes(), 4112u);
  EXPECT_EQ(tracker->ledger().untrackedReleases(), 0u);
}

TEST_F(AllocTrackerTest, TwoThreadsInterleavedKeepTheirOwnCallsAndTheOrderOfEffects) {
  start();
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {10});
  target.enter(kT2, FakeAllocTarget::kMalloc, kSp + 0x100000, {20});
  target.leave(kT2, 0x10007, kSp + 0x100000, 0x2000);
  target.leave(kT1, 0x10009, kSp, 0x1000);
  // T1 frees T2's block; T2's next malloc gets the same address.
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {0x2000});
  target.enter(kT2, FakeAllocTarget::kMalloc, kSp + 0x100000, {30});
  target.leave(kT2, 0x10007, kSp + 0x100000, 0x2000);
  ASSERT_EQ(events().size(), 4u);
  EXPECT_EQ(events()[0].tid, kT2);
  EXPECT_EQ(events()[0].size, 20u);
  EXPECT_EQ(events()[1].tid, kT1);
  EXPECT_EQ(events()[1].size, 10u);
  EXPECT_EQ(events()[2].function, AllocFunction::Free);
  EXPECT_EQ(events()[2].previous, 0x2000u);
  EXPECT_EQ(events()[3].pointer, 0x2000u);
  EXPECT_EQ(events()[3].size, 30u);
  EXPECT_EQ(tracker->ledger().liveBytes(), 40u);
  EXPECT_EQ(tracker->ledger().liveBlocks(), 2u);
}

TEST_F(AllocTrackerTest, PosixMemalignReadsTheBlockFromMemptrAfterASuccess) {
  start();
  target.write64(0x30000, 0xb000);
  target.enter(kT1, FakeAllocTarget::kPosixMemalign, kSp, {0x30000, 64, 256});
  target.leave(kT1, 0x10602, kSp, 0);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::PosixMemalign);
  EXPECT_EQ(events()[0].pointer, 0xb000u);
  EXPECT_EQ(events()[0].size, 256u);

  // ENOMEM (12): *memptr is not touched and nothing is recorded.
  target.enter(kT1, FakeAllocTarget::kPosixMemalign, kSp, {0x30000, 64, 256});
  target.leave(kT1, 0x10602, kSp, 12);
  EXPECT_EQ(events().size(), 1u);
}

TEST_F(AllocTrackerTest, CallocEndsAtItsTailJumpToMemsetAndOverflowRecordsNothing) {
  start();
  target.enter(kT1, FakeAllocTarget::kCalloc, kSp, {10, 12});
  target.threadState[kT1].regs[registerTable(Isa::X86_64).argumentRegs[0]] = 0xc000;
  target.leave(kT1, 0x10305, kSp, 0xdead); // at the jmp: the block is memset's first argument
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::Calloc);
  EXPECT_EQ(events()[0].pointer, 0xc000u);
  EXPECT_EQ(events()[0].size, 120u);
  EXPECT_FALSE(target.hit(kT1, 0x10e03, kSp)) << "memset's ret has no breakpoint";

  target.enter(kT1, FakeAllocTarget::kCalloc, kSp, {uint64_t{1} << 33, uint64_t{1} << 33});
  target.leave(kT1, 0x1030a, kSp, 0);
  EXPECT_EQ(events().size(), 1u);
  EXPECT_EQ(tracker->stats().failedCalls, 1u);
}

TEST_F(AllocTrackerTest, MemalignEndsInItsTailJumpTarget) {
  start();
  target.enter(kT1, FakeAllocTarget::kMemalign, kSp, {64, 200});
  target.leave(kT1, 0x10802, kSp, 0xe000);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::Memalign);
  EXPECT_EQ(events()[0].size, 200u);
}

TEST_F(AllocTrackerTest, MallocZeroCountsAndNullResultDoesNot) {
  start();
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {0});
  target.leave(kT1, 0x10007, kSp, 0xf000);
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {uint64_t{1} << 60});
  target.leave(kT1, 0x10007, kSp, 0);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].size, 0u);
  EXPECT_EQ(tracker->stats().failedCalls, 1u);
}

TEST_F(AllocTrackerTest, ATailJumpThroughAnUnboundStubEndsAtTheHookedTargetsExit) {
  start();
  // new[] (nothrow) jumps through _Znwm@plt, not bound yet; operator new's ret, reached with
  // new[]'s entry stack pointer, ends the new[] call.
  target.enter(kT1, FakeAllocTarget::kNewArrayNothrow, kSp, {96});
  target.enter(kT1, FakeAllocTarget::kNew, kSp, {96});
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp - 16, {96}, {0x10409});
  target.leave(kT1, 0x10007, kSp - 16, 0x1200);
  target.leave(kT1, 0x1040d, kSp, 0x1200);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::NewArray);
  EXPECT_EQ(events()[0].size, 96u);
  EXPECT_EQ(tracker->stats().nestedCalls, 2u);
}

TEST_F(AllocTrackerTest, ACallLeftByAnExceptionIsAbandonedAtTheThreadsNextCall) {
  start();
  target.enter(kT1, FakeAllocTarget::kNew, kSp - 64, {1ull << 62});
  // operator new threw; the next allocation comes from a shallower frame.
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {8});
  target.leave(kT1, 0x10007, kSp, 0x1100);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::Malloc);
  EXPECT_EQ(tracker->stats().abandonedCalls, 1u);
}

TEST_F(AllocTrackerTest, AnonymousMappingsWithMmapAndNestedUnmapInsideFree) {
  AllocTrackerOptions options;
  options.mmap = true;
  start(options);
  EXPECT_TRUE(target.breakpoints.count(0x10a07));
  EXPECT_TRUE(target.breakpoints.count(0x10106)) << "free waits for its return with mmap hooks";
  target.enter(kT1, FakeAllocTarget::kMmap, kSp, {0, 10000, 3, 0x22}); // PRIVATE | ANONYMOUS
  target.leave(kT1, 0x10a07, kSp, 0x70000000);
  target.enter(kT1, FakeAllocTarget::kMmap, kSp, {0, 4096, 1, 0x02}); // a file mapping
  target.leave(kT1, 0x10a07, kSp, 0x71000000);
  target.enter(kT1, FakeAllocTarget::kMremap, kSp, {0x70000000, 12288, 20000, 1});
  target.leave(kT1, 0x10c07, kSp, 0x72000000);
  target.enter(kT1, FakeAllocTarget::kMunmap, kSp, {0x72000000, 4096});
  // free unmapping a large block: munmap inside free is the same release.
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {0x73000010});
  target.enter(kT1, FakeAllocTarget::kMunmap, kSp - 48, {0x73000000, 0x21000}, {0x10105});
  target.leave(kT1, 0x10106, kSp, 0);
  ASSERT_EQ(events().size(), 4u);
  EXPECT_EQ(events()[0].function, AllocFunction::Mmap);
  EXPECT_EQ(events()[0].size, 10000u);
  EXPECT_EQ(events()[1].function, AllocFunction::Mremap);
  EXPECT_EQ(events()[1].previous, 0x70000000u);
  EXPECT_EQ(events()[1].previousSize, 12288u);
  EXPECT_EQ(events()[1].pointer, 0x72000000u);
  EXPECT_EQ(events()[2].function, AllocFunction::Munmap);
  EXPECT_EQ(events()[2].previousSize, 4096u);
  EXPECT_EQ(events()[3].function, AllocFunction::Free);
  // 20000 bytes map 5 pages; munmap took the first: 4 pages stay.
  EXPECT_EQ(tracker->ledger().liveBytes(), 4u * 4096);
}

TEST_F(AllocTrackerTest, FunctionsOptionLimitsTheHookSet) {
  AllocTrackerOptions options;
  options.functions = {"malloc", "free"};
  start(options);
  EXPECT_EQ(
      keysOf(target.breakpoints),
      (std::set<uint64_t>{FakeAllocTarget::kMalloc, FakeAllocTarget::kFree, 0x10007, 0x10009}));
  EXPECT_EQ(tracker->stats().hooked, (std::vector<std::string>{"malloc", "free"}));
}

TEST_F(AllocTrackerTest, StopRemovesEveryBreakpointAndKeepsTheEvents) {
  start();
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {8});
  target.leave(kT1, 0x10007, kSp, 0x1000);
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {8});
  tracker->stop();
  EXPECT_TRUE(target.breakpoints.empty());
  EXPECT_EQ(target.removedBreakpoints, 18u);
  EXPECT_FALSE(tracker->active());
  EXPECT_EQ(events().size(), 1u);
  EXPECT_EQ(tracker->stats().abandonedCalls, 1u);
}

TEST_F(AllocTrackerTest, BreakpointsADebuggerCommandDeletedArePlantedAgain) {
  start();
  target.deleteBehindStrobe(FakeAllocTarget::kMalloc);
  target.deleteBehindStrobe(0x10007); // one of malloc's rets
  EXPECT_EQ(tracker->deletedBreakpoints(), 2u);
  EXPECT_FALSE(target.hit(kT1, FakeAllocTarget::kMalloc, kSp));
  EXPECT_EQ(tracker->replantDeleted(), 2u);
  EXPECT_EQ(tracker->deletedBreakpoints(), 0u);
  EXPECT_EQ(tracker->replantDeleted(), 0u) << "the others were never gone";
  EXPECT_EQ(tracker->stats().replanted, 2u);
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {24});
  target.leave(kT1, 0x10007, kSp, 0x5000);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].size, 24u);
  tracker->stop();
  EXPECT_TRUE(target.breakpoints.empty()) << "the planted-again ones are removed too";
}

TEST_F(AllocTrackerTest, RefusedBreakpointsAreCounted) {
  target.refused = {0x10802};
  start();
  EXPECT_EQ(tracker->stats().failedBreakpoints, 1u);
  EXPECT_EQ(tracker->stats().exitBreakpoints, 7u);
}

TEST_F(AllocTrackerTest, SymbolizesEventStacksWithReturnAddressesLookedUpBeforeThem) {
  target.symbolTable[0x401000] = {"caller", 0x401000, 0x10, "/src/app.c", 7, {}};
  target.symbolTable[0x401010] = {"next_function", 0x401010, 0x10, "/src/app.c", 9, {}};
  start();
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {8});
  target.leave(kT1, 0x10007, kSp, 0x1000);
  tracker->symbolizePending();
  ASSERT_TRUE(capture.callerSymbol(kCaller));
  // 0x401010 starts next_function, but the call that returns there is in caller.
  EXPECT_EQ(capture.callerSymbol(kCaller)->function, "caller");
  EXPECT_EQ(capture.symbolFor(FakeAllocTarget::kMalloc)->function, "malloc");
  EXPECT_TRUE(capture.moduleFor(FakeAllocTarget::kMalloc));
  ASSERT_EQ(capture.threads.size(), 1u);
  EXPECT_EQ(capture.threads[0].tid, kT1);
}
