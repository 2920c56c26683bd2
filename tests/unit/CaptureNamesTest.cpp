// Naming a capture's stacks: a return address is named after its call, whatever else was
// sampled at the same address.
#include "capture/CaptureNames.h"
#include "FakeTarget.h"

#include <gtest/gtest.h>

using namespace strobe;

namespace {

constexpr uint64_t kAfterCall = 0x401010; // returned to by a call at caller's end

class CaptureNamesTest : public ::testing::TestWithParam<bool> {
protected:
  CaptureNamesTest() {
    target.symbolTable[0x401000] = {"caller", 0x401000, 0x10, "/src/app.c", 7, {}};
    target.symbolTable[kAfterCall] = {"next_function", kAfterCall, 0x10, "/src/app.c", 9, {}};
    target.symbolTable[0x500000] = {"callee", 0x500000, 0x20, "/src/lib.c", 3, {}};
  }
  strobe::testing::FakeTarget target;
  Capture capture;
};

TEST_P(CaptureNamesTest, AReturnAddressIsNamedAfterItsCallEvenWhereAPcWasSampled) {
  CaptureNames names(target, capture);
  const std::vector<uint64_t> sampledThere{kAfterCall}, called{0x500004, kAfterCall};
  bool pcFirst = GetParam();
  names.noteStack(pcFirst ? sampledThere : called);
  names.symbolizePending();
  names.noteStack(pcFirst ? called : sampledThere);
  names.symbolizePending();
  ASSERT_TRUE(capture.symbolFor(kAfterCall));
  EXPECT_EQ(capture.symbolFor(kAfterCall)->function, "next_function");
  EXPECT_EQ(capture.symbolFor(kAfterCall)->line, 9u);
  ASSERT_TRUE(capture.callerSymbol(kAfterCall));
  EXPECT_EQ(capture.callerSymbol(kAfterCall)->function, "caller");
  EXPECT_EQ(capture.callerSymbol(kAfterCall)->line, 7u);
  EXPECT_EQ(capture.symbolFor(0x500004)->function, "callee");
}

INSTANTIATE_TEST_SUITE_P(EitherOrder, CaptureNamesTest, ::testing::Bool(),
                         [](const auto &info) { return info.param ? "PcFirst" : "CallerFirst"; });

} // namespace
