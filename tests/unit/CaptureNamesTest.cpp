// Naming a capture's stacks: a return address is named after its call, whatever else was
// sampled at the same address; after an exec, from what the capture knows of the old program.
#include "capture/CaptureNames.h"
#include "FakeTarget.h"

#include <climits>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

// A function of this test program's own ELF symbol table, for the names read from its file.
extern "C" __attribute__((noinline)) int strobe_capture_names_marker(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}

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

// The debugger has moved on to the next program, whose code sits at the same addresses.
void execNext(strobe::testing::FakeTarget &target) {
  target.moduleTable = {{"/bin/next", "", 0x400000, 0x600000, 0}};
  target.symbolTable = {{0x400000, {"next_main", 0x400000, 0x200000, "/src/next.c", 1, {}}}};
}

TEST_F(CaptureNamesTest, AfterAnExecAPcTakesTheNameOfTheFunctionAlreadyNamedAroundIt) {
  CaptureNames names(target, capture);
  names.noteStack(std::vector<uint64_t>{0x500004});
  names.symbolizePending();
  execNext(target);
  names.programReplaced();
  names.noteStack(std::vector<uint64_t>{0x500010, kAfterCall + 0x800}); // its caller: unknown
  names.symbolizePending();
  ASSERT_TRUE(capture.symbolFor(0x500010));
  EXPECT_EQ(capture.symbolFor(0x500010)->function, "callee");
  EXPECT_EQ(capture.symbolFor(0x500010)->start, 0x500000u);
  EXPECT_EQ(capture.symbolFor(0x500010)->line, 0u) << "the line was the debugger's for 0x500004";
  ASSERT_TRUE(capture.callerSymbol(kAfterCall + 0x800));
  EXPECT_EQ(capture.callerSymbol(kAfterCall + 0x800)->function, "");
  names.refreshModules();
  for (const ModuleInfo &m : capture.modules)
    EXPECT_NE(m.path, "/bin/next");
}

TEST_F(CaptureNamesTest, AfterAnExecAPcIsNamedFromItsModulesFile) {
  char self[PATH_MAX] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  dl_phdr_info program{};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *out) {
        *static_cast<dl_phdr_info *>(out) = *info; // the first is the program itself
        return 1;
      },
      &program);
  const auto marker = reinterpret_cast<uint64_t>(&strobe_capture_names_marker);
  capture.modules = {{self, "", marker & ~uint64_t{0xfff}, marker + 0x1000, program.dlpi_addr}};
  CaptureNames names(target, capture);
  execNext(target);
  names.programReplaced();
  names.noteStack(std::vector<uint64_t>{marker + 1});
  names.symbolizePending();
  ASSERT_TRUE(capture.symbolFor(marker + 1));
  EXPECT_EQ(capture.symbolFor(marker + 1)->function, "strobe_capture_names_marker");
  EXPECT_EQ(capture.symbolFor(marker + 1)->start, marker);
  EXPECT_GT(capture.symbolFor(marker + 1)->size, 1u);
  EXPECT_EQ(strobe_capture_names_marker(1), 4); // used, so kept
}

INSTANTIATE_TEST_SUITE_P(EitherOrder, CaptureNamesTest, ::testing::Bool(),
                         [](const auto &info) { return info.param ? "PcFirst" : "CallerFirst"; });

} // namespace
