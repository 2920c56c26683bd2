// An LLDB user who deletes breakpoints by number (`breakpoint delete 2-10`) can delete strobe's
// heap hooks: the session plants them again at the next strobe command or `continue`, says so, and
// an exit reached without them warns that the tables are short.
#include "FakeAllocTarget.h"

#include "command/Session.h"

#include <gtest/gtest.h>

using namespace strobe;
using strobe::testing::FakeAllocTarget;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

struct HeapHooksDeletedTest : ::testing::Test {
  FakeAllocTarget target;
  Session session{&target, "fake"};

  void SetUp() override {
    std::string out;
    ASSERT_TRUE(session.execute("mem start", out)) << out;
    ASSERT_TRUE(target.breakpoints.count(FakeAllocTarget::kFree));
  }
};

} // namespace

TEST_F(HeapHooksDeletedTest, TheNextStrobeCommandPlantsThemAgain) {
  target.deleteBehindStrobe(FakeAllocTarget::kFree);
  target.deleteBehindStrobe(FakeAllocTarget::kMalloc);
  std::string out;
  ASSERT_TRUE(session.execute("mem status", out)) << out;
  EXPECT_TRUE(contains(out, "strobe: a debugger command deleted 2 of strobe's heap breakpoints; "
                            "planted again"))
      << out;
  EXPECT_TRUE(contains(out, "planted again: 2 breakpoints a debugger command had deleted\n"))
      << out;
  EXPECT_TRUE(target.breakpoints.count(FakeAllocTarget::kFree));
  EXPECT_TRUE(target.breakpoints.count(FakeAllocTarget::kMalloc));
  out.clear();
  ASSERT_TRUE(session.execute("mem status", out)) << out;
  EXPECT_FALSE(contains(out, "a debugger command deleted")) << "said once: " << out;
}

TEST_F(HeapHooksDeletedTest, AContinueForTheUserPlantsThemAgain) {
  target.deleteBehindStrobe(FakeAllocTarget::kFree);
  session.beforeUserResume();
  EXPECT_TRUE(contains(target.printed, "deleted 1 of strobe's heap breakpoints; planted again"))
      << target.printed;
  EXPECT_TRUE(target.breakpoints.count(FakeAllocTarget::kFree));
}

TEST_F(HeapHooksDeletedTest, AnExitWithoutThemWarnsThatTheTablesAreShort) {
  target.deleteBehindStrobe(FakeAllocTarget::kFree);
  EXPECT_EQ(session.onStop({StopEvent::Kind::Exited, 0, 0, 0, "exited"}), Verdict::HandToUser);
  EXPECT_TRUE(contains(target.printed, "warning: a debugger command deleted 1 of strobe's heap "
                                       "breakpoints; the heap calls made after that are missing"))
      << target.printed;
}

TEST_F(HeapHooksDeletedTest, NothingIsSaidWhenNoneWasDeleted) {
  std::string out;
  ASSERT_TRUE(session.execute("mem status", out)) << out;
  session.beforeUserResume();
  session.onStop({StopEvent::Kind::Exited, 0, 0, 0, "exited"});
  EXPECT_FALSE(contains(out + target.printed, "deleted")) << out << target.printed;
}
