// `strobe mem status` where the hook set meets a process that lacks part of it: a C program has no
// operator new / delete, and --functions may name something that is no allocation function.
#include "FakeAllocTarget.h"

#include "report/MemoryReport.h"

#include <gtest/gtest.h>

using namespace strobe;
using strobe::testing::FakeAllocTarget;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// The fake's libc without the C++ runtime: every operator symbol it has is gone.
void removeCxxRuntime(FakeAllocTarget &target) {
  std::erase_if(target.resolvable, [](const auto &entry) {
    return entry.first.starts_with("_Zn") || entry.first.starts_with("_Zd");
  });
}

std::string statusAfterStart(FakeAllocTarget &target, AllocTrackerOptions options = {}) {
  Capture capture;
  AllocTracker tracker(target, capture, std::move(options), [] { return uint64_t{0}; });
  tracker.start();
  return renderMemoryStatus(tracker);
}

} // namespace

TEST(MemoryStatusTest, AProcessWithoutACxxRuntimeGetsOneLineForTheOperators) {
  FakeAllocTarget target;
  removeCxxRuntime(target);
  std::string text = statusAfterStart(target);
  EXPECT_TRUE(contains(text, "operator new / delete: not in this process (no C++ runtime is "
                             "loaded)\n"))
      << text;
  // The C functions the fake lacks are still named; no operator's linkage name is.
  EXPECT_TRUE(contains(text, "not found: valloc, pvalloc\n")) << text;
  EXPECT_FALSE(contains(text, "_Z")) << text;
}

TEST(MemoryStatusTest, OperatorsMissingBesideOthersThatWereFoundAreListed) {
  FakeAllocTarget target; // has _Znwm and _ZdlPv, not _Znam's nothrow-free variants
  std::string text = statusAfterStart(target);
  EXPECT_TRUE(contains(text, "not found: valloc, pvalloc, _ZnwmRKSt9nothrow_t")) << text;
  EXPECT_FALSE(contains(text, "no C++ runtime")) << text;
}

TEST(MemoryStatusTest, FunctionsOutsideTheHookSetAreNamed) {
  FakeAllocTarget target;
  AllocTrackerOptions options;
  options.functions = {"malloc", "nope", "operator new"};
  std::string text = statusAfterStart(target, options);
  EXPECT_TRUE(contains(text, "not allocation functions strobe hooks: nope, operator new\n"))
      << text;
  EXPECT_TRUE(contains(text, "hooks: 1 function (1 entry and 2 exit breakpoints)\n")) << text;
}
