// How AllocTracker tells one release seen through wrappers from two releases: libstdc++'s sized
// delete[] forwards to delete[], which forwards to delete, which tail-jumps to free, all with the
// same pointer at the same stack pointer, and each hop hits a hooked entry. Found in the real
// debuggers (examples/calls.cpp: 2000 deletes counted as 4000 frees, 2000 of them untracked).
#include "FakeAllocTarget.h"

#include "capture/AllocTracker.h"

#include <gtest/gtest.h>

using namespace strobe;
using strobe::testing::FakeAllocTarget;

namespace {

constexpr uint64_t kT1 = 1001, kT2 = 1002;
constexpr uint64_t kSp = 0x7fff0000, kSpT2 = 0x7ffe0000;
constexpr uint64_t kBlock = 0x6000;
// Two more forwarding wrappers after the fake libc's code, as libstdc++ builds them:
//   0x11000 _ZdlPvm   jmp _ZdlPv   (e9, rel32 = 0x10500 - 0x11005 = -0xb05)
//   0x11010 _ZdaPvm   jmp _ZdlPvm  (e9, rel32 = 0x11000 - 0x11015 = -0x15)
constexpr uint64_t kSizedDelete = 0x11000, kSizedDeleteArray = 0x11010;

struct AllocTrackerReleaseTest : ::testing::Test {
  FakeAllocTarget target;
  Capture capture;
  uint64_t now = 0;
  std::unique_ptr<AllocTracker> tracker;

  AllocTrackerReleaseTest() {
    wrapper("_ZdlPvm", kSizedDelete, {0xe9, 0xfb, 0xf4, 0xff, 0xff});
    wrapper("_ZdaPvm", kSizedDeleteArray, {0xe9, 0xeb, 0xff, 0xff, 0xff});
    tracker = std::make_unique<AllocTracker>(target, capture, AllocTrackerOptions{},
                                             [this] { return ++now; });
    tracker->start();
  }

  void wrapper(const std::string &name, uint64_t address, std::vector<uint8_t> code) {
    target.symbolTable[address] = {name, address, code.size(), "", 0, {}};
    target.write(address, code);
    target.resolvable[name].push_back(address);
  }

  const std::vector<AllocEvent> &events() const { return capture.allocEvents; }
};

} // namespace

TEST_F(AllocTrackerReleaseTest, ADeleteForwardedThroughThreeWrappersIsOneFree) {
  for (uint64_t hop :
       {kSizedDeleteArray, kSizedDelete, FakeAllocTarget::kDelete, FakeAllocTarget::kFree})
    target.enter(kT1, hop, kSp, {kBlock});
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].function, AllocFunction::DeleteArray) << "the outermost call's";
  EXPECT_EQ(events()[0].previous, kBlock);
  EXPECT_EQ(tracker->stats().nestedCalls, 3u);
  EXPECT_EQ(tracker->ledger().untrackedReleases(), 1u) << "one release of a block never seen";
}

TEST_F(AllocTrackerReleaseTest, TheNextDeleteOfTheSameThreadIsANewFree) {
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {16});
  target.leave(kT1, 0x10009, kSp, kBlock);
  target.enter(kT1, kSizedDelete, kSp, {kBlock});
  target.enter(kT1, FakeAllocTarget::kDelete, kSp, {kBlock});
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {kBlock});
  target.enter(kT1, FakeAllocTarget::kMalloc, kSp, {16});
  target.leave(kT1, 0x10009, kSp, kBlock);
  target.enter(kT1, kSizedDelete, kSp, {kBlock});
  target.enter(kT1, FakeAllocTarget::kDelete, kSp, {kBlock});
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {kBlock});
  ASSERT_EQ(events().size(), 4u);
  EXPECT_EQ(events()[1].previous, kBlock);
  EXPECT_EQ(events()[3].previous, kBlock);
  EXPECT_EQ(tracker->ledger().untrackedReleases(), 0u);
  EXPECT_EQ(tracker->ledger().liveBlocks(), 0u);
}

TEST_F(AllocTrackerReleaseTest, ABlockFreedAgainAfterAnotherThreadReceivedItIsASecondFree) {
  // A consumer thread frees two items in a row with no other allocator call between; the
  // producer's malloc returned the first item's address for the second one meanwhile.
  target.enter(kT2, FakeAllocTarget::kMalloc, kSpT2, {16});
  target.leave(kT2, 0x10009, kSpT2, kBlock);
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {kBlock});
  target.enter(kT2, FakeAllocTarget::kMalloc, kSpT2, {24});
  target.leave(kT2, 0x10009, kSpT2, kBlock);
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {kBlock});
  ASSERT_EQ(events().size(), 4u);
  EXPECT_EQ(events()[3].function, AllocFunction::Free);
  EXPECT_EQ(events()[3].previous, kBlock);
  EXPECT_EQ(tracker->ledger().liveBlocks(), 0u);
  EXPECT_EQ(tracker->ledger().untrackedReleases(), 0u);
}

TEST_F(AllocTrackerReleaseTest, FreeOfNullTwiceInARowIsTwoFrees) {
  // free(a); free(b) with both null: the same pointer at the same stack level, but free does not
  // jump to free, so the second is a call of its own (spec 003: free(NULL) is counted).
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {0});
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {0});
  ASSERT_EQ(events().size(), 2u);
  EXPECT_EQ(events()[1].function, AllocFunction::Free);
  EXPECT_EQ(tracker->stats().nestedCalls, 0u);
}

TEST_F(AllocTrackerReleaseTest, ReleaseHooksGetNoExitBreakpoints) {
  // Scanned for what they forward to, never trapped where they end: a free costs one trap.
  for (uint64_t exit : {uint64_t{0x10106}, kSizedDelete, kSizedDeleteArray})
    EXPECT_EQ(target.breakpoints.count(exit), exit == 0x10106 ? 0u : 1u) << std::hex << exit;
  target.enter(kT1, FakeAllocTarget::kFree, kSp, {kBlock});
  EXPECT_FALSE(target.hit(kT1, 0x10106, kSp)) << "free's ret";
  EXPECT_EQ(tracker->stats().traps, 1u);
}
