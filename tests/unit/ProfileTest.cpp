// The reduction of spec 002 and its views, on hand-built captures with hand-counted answers.
#include "analysis/Profile.h"

#include <gtest/gtest.h>

using namespace strobe;

namespace {

constexpr uint64_t kLibc = 0x7f0000000000;

Sample sample(uint64_t tid, std::vector<uint64_t> stack, bool onCpu = true,
              bool inSyscall = false) {
  Sample s;
  s.tid = tid;
  s.onCpu = onCpu;
  s.inSyscall = inSyscall;
  s.stack = std::move(stack);
  return s;
}

void add(Profile &profile, int times, const Sample &s) {
  for (int i = 0; i < times; ++i)
    profile.add(s);
}

Capture tables() {
  Capture c;
  c.header.pid = 4242;
  c.header.program = "/opt/demo/demo";
  c.modules = {{"/opt/demo/demo", "", 0x400000, 0x402000, 0},
               {"/usr/lib/libc.so.6", "", kLibc, kLibc + 0x200000, kLibc},
               {"[vdso]", "", 0x7fff0000, 0x7fff2000, 0x7fff0000}};
  c.symbols[0x401010] = {"compute", 0x401000, 0x40, "/src/demo.c", 10, {}};
  c.symbols[0x401014] = {"compute", 0x401000, 0x40, "/src/demo.c", 10, {}};
  c.symbols[0x401100] = {"helper", 0x401100, 0x20, "/src/util.c", 10, {}};
  // Calls, filed at return address - 1: main's return addresses are 0x401205 and 0x401215.
  c.symbols[0x401204] = {"main", 0x401200, 0x40, "/src/demo.c", 30, {}};
  c.symbols[0x401214] = {"main", 0x401200, 0x40, "/src/demo.c", 31, {}};
  c.symbols[kLibc + 0x1234] = {"read", kLibc + 0x1200, 0x80, "", 0, {"inner", "outer"}};
  c.symbols[0x7fff0100] = {"__vdso_clock_gettime", 0x7fff0100, 0x50, "", 0, {}};
  return c;
}

} // namespace

TEST(Profile, IdenticalSamplesCollapseIntoOneCount) {
  Profile p;
  add(p, 3, sample(1, {0x401010, 0x401205}));
  add(p, 2, sample(1, {0x401010, 0x401215}));        // same pc, another caller
  add(p, 1, sample(2, {0x401010, 0x401205}));        // another thread
  add(p, 1, sample(1, {0x401010, 0x401205}, false)); // off CPU
  EXPECT_EQ(p.samples(), 7u);
  EXPECT_EQ(p.distinctStacks(), 4u);
  EXPECT_EQ(p.byPc({}), (std::map<uint64_t, uint64_t>{{0x401010, 7}}));
}

TEST(Profile, FiltersByThreadAndOnCpu) {
  Profile p;
  add(p, 5, sample(1, {0x401010}));
  add(p, 3, sample(1, {0x401010}, false));
  add(p, 2, sample(2, {0x401100}));
  EXPECT_EQ(p.count({}), 10u);
  EXPECT_EQ(p.count({true, std::nullopt}), 7u);
  EXPECT_EQ(p.count({false, 1}), 8u);
  EXPECT_EQ(p.count({true, 1}), 5u);
  EXPECT_EQ(p.count({false, 3}), 0u);
  EXPECT_EQ(p.threads({}), (std::set<uint64_t>{1, 2}));
  EXPECT_EQ(p.threads({false, 2}), (std::set<uint64_t>{2}));
}

TEST(Profile, SpacesAreModulesPlusSyscallAndUnknown) {
  Capture c = tables();
  Profile p;
  add(p, 4, sample(1, {0x401010}));
  add(p, 3, sample(1, {kLibc + 0x1234}, false, true)); // in a syscall: not libc's time
  add(p, 2, sample(2, {0x7fff0100}));
  add(p, 2, sample(2, {0x12345678}));
  add(p, 1, sample(2, {kLibc + 0x1234}));
  std::vector<SpaceRow> rows = p.byModule(c, {});
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].space, "/opt/demo/demo");
  EXPECT_EQ(rows[0].samples, 4u);
  EXPECT_EQ(rows[1].space, "[syscall]");
  EXPECT_EQ(rows[1].samples, 3u);
  // Equal counts sort by name.
  EXPECT_EQ(rows[2].space, "[unknown]");
  EXPECT_EQ(rows[2].samples, 2u);
  EXPECT_EQ(rows[3].space, "[vdso]");
  EXPECT_EQ(rows[3].samples, 2u);
  EXPECT_EQ(rows[4].space, "/usr/lib/libc.so.6");
  EXPECT_EQ(rows[4].samples, 1u);

  std::vector<MatrixRow> threads = p.byThread(c, {});
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].id, 1u);
  EXPECT_EQ(threads[0].samples, 7u);
  EXPECT_EQ(threads[0].spaces,
            (std::map<std::string, uint64_t>{{"/opt/demo/demo", 4}, {"[syscall]", 3}}));
  EXPECT_EQ(threads[1].id, 2u);
  EXPECT_EQ(threads[1].spaces, (std::map<std::string, uint64_t>{
                                   {"/usr/lib/libc.so.6", 1}, {"[unknown]", 2}, {"[vdso]", 2}}));

  std::vector<MatrixRow> process = p.byProcess(c, {});
  ASSERT_EQ(process.size(), 1u);
  EXPECT_EQ(process[0].id, 4242u);
  EXPECT_EQ(process[0].samples, 12u);
  EXPECT_EQ(process[0].spaces.at("[syscall]"), 3u);
}

TEST(Profile, FunctionsCountSelfSamplesWithTheirCallSites) {
  Capture c = tables();
  Profile p;
  add(p, 3, sample(1, {0x401010, 0x401205}));
  add(p, 1, sample(1, {0x401014, 0x401215}));
  add(p, 4, sample(1, {0x401100, 0x401215}));
  add(p, 2, sample(1, {0x401100})); // the unwinder found no frame 1
  std::vector<FunctionRow> rows = p.byFunction(c, {});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].function, "helper");
  EXPECT_EQ(rows[0].self, 6u);
  ASSERT_EQ(rows[0].callers.size(), 2u);
  EXPECT_EQ(rows[0].callers[0].function, "main");
  EXPECT_EQ(rows[0].callers[0].line, 31u);
  EXPECT_EQ(rows[0].callers[0].samples, 4u);
  EXPECT_EQ(rows[0].callers[1].function, "");
  EXPECT_EQ(rows[0].callers[1].samples, 2u);

  EXPECT_EQ(rows[1].function, "compute");
  EXPECT_EQ(rows[1].module, "/opt/demo/demo");
  EXPECT_EQ(rows[1].self, 4u);
  ASSERT_EQ(rows[1].callers.size(), 2u);
  EXPECT_EQ(rows[1].callers[0].file, "/src/demo.c");
  EXPECT_EQ(rows[1].callers[0].line, 30u);
  EXPECT_EQ(rows[1].callers[0].samples, 3u);
  EXPECT_EQ(rows[1].callers[1].line, 31u);
  EXPECT_EQ(rows[1].callers[1].samples, 1u);

  // A caller that never ran itself still has its inclusive count.
  EXPECT_EQ(rows[2].function, "main");
  EXPECT_EQ(rows[2].self, 0u);
  EXPECT_EQ(rows[2].inclusive, 8u);
}

TEST(Profile, CallerModuleIsTheOneHoldingTheCallInstruction) {
  Capture c = tables();
  // A call as the last instruction of the executable's mapping returns to its end address.
  c.symbols[0x401fff] = {"tail", 0x401f00, 0x100, "/src/demo.c", 99, {}};
  Profile p;
  add(p, 1, sample(1, {0x401010, 0x402000}));
  std::vector<FunctionRow> rows = p.byFunction(c, {});
  const FunctionRow &compute = rows[0].function == "compute" ? rows[0] : rows[1];
  ASSERT_EQ(compute.callers.size(), 1u);
  EXPECT_EQ(compute.callers[0].function, "tail");
  EXPECT_EQ(compute.callers[0].module, "/opt/demo/demo");
  EXPECT_EQ(compute.callers[0].line, 99u);
}

TEST(Profile, ACallerIsNamedAfterItsCallNotAfterAPcSampledWhereItReturns) {
  Capture c = tables();
  c.symbols[0x401215] = {"main", 0x401200, 0x40, "/src/demo.c", 32, {}}; // after the call
  Profile p;
  add(p, 2, sample(1, {0x401100, 0x401215}));
  add(p, 1, sample(1, {0x401215}));
  std::vector<FunctionRow> rows = p.byFunction(c, {});
  const FunctionRow &helper = rows[0].function == "helper" ? rows[0] : rows[1];
  ASSERT_EQ(helper.callers.size(), 1u);
  EXPECT_EQ(helper.callers[0].line, 31u);
  std::vector<LineRow> lines = p.byLine(c, {});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].functions, std::vector<std::string>{"main"});
  EXPECT_EQ(lines[1].line, 32u) << "main's own sample is at the line after the call";
}

TEST(Profile, FilesThatFiledCallsAtTheReturnAddressStillNameTheirCallers) {
  Capture c = tables();
  c.symbols.erase(0x401214);
  c.symbols[0x401215] = {"main", 0x401200, 0x40, "/src/demo.c", 31, {}};
  Profile p;
  add(p, 1, sample(1, {0x401100, 0x401215}));
  std::vector<FunctionRow> rows = p.byFunction(c, {});
  ASSERT_EQ(rows[0].callers.size(), 1u);
  EXPECT_EQ(rows[0].callers[0].function, "main");
  EXPECT_EQ(rows[0].callers[0].line, 31u);
}

TEST(Profile, InclusiveCountsAFunctionOncePerSample) {
  Capture c;
  c.modules = {{"/bin/app", "", 0x1000, 0x9000, 0}};
  c.symbols[0x1010] = {"a", 0x1000, 0x100, "", 0, {}};
  c.symbols[0x1105] = {"b", 0x1100, 0x100, "", 0, {}};
  c.symbols[0x1205] = {"main", 0x1200, 0x100, "", 0, {}};
  c.symbols[0x1020] = {"a", 0x1000, 0x100, "", 0, {}};
  Profile p;
  add(p, 6, sample(1, {0x1010, 0x1105, 0x1205}));
  add(p, 3, sample(1, {0x1105, 0x1205}));
  add(p, 1, sample(1, {0x1010, 0x1020, 0x1205})); // a recursing into itself
  std::vector<FunctionRow> rows = p.byFunction(c, {});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].function, "a");
  EXPECT_EQ(rows[0].self, 7u);
  EXPECT_EQ(rows[0].inclusive, 7u);
  EXPECT_EQ(rows[1].function, "b");
  EXPECT_EQ(rows[1].self, 3u);
  EXPECT_EQ(rows[1].inclusive, 9u);
  EXPECT_EQ(rows[2].function, "main");
  EXPECT_EQ(rows[2].self, 0u);
  EXPECT_EQ(rows[2].inclusive, 10u);
}

TEST(Profile, LinesAreFileAndLineNotLineAlone) {
  Capture c = tables();
  Profile p;
  add(p, 3, sample(1, {0x401010}));
  add(p, 2, sample(1, {0x401014})); // another pc of demo.c:10
  add(p, 4, sample(1, {0x401100})); // util.c:10
  add(p, 1, sample(1, {kLibc + 0x1234}));
  std::vector<LineRow> rows = p.byLine(c, {});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].file, "/src/demo.c");
  EXPECT_EQ(rows[0].line, 10u);
  EXPECT_EQ(rows[0].samples, 5u);
  EXPECT_EQ(rows[0].functions, std::vector<std::string>{"compute"});
  EXPECT_EQ(rows[1].file, "/src/util.c");
  EXPECT_EQ(rows[1].line, 10u);
  EXPECT_EQ(rows[1].samples, 4u);
  EXPECT_EQ(rows[2].file, "");
  EXPECT_EQ(rows[2].functions, std::vector<std::string>{"read"});
  EXPECT_EQ(rows[2].samples, 1u);
}

TEST(Profile, ALineSharedByFunctionsListsThemMostSampledFirst) {
  Capture c = tables();
  c.symbols[0x401230] = {"main", 0x401200, 0x40, "/src/demo.c", 10, {"compute"}};
  Profile p;
  add(p, 1, sample(1, {0x401010}));
  add(p, 3, sample(1, {0x401230}));
  std::vector<LineRow> rows = p.byLine(c, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].samples, 4u);
  EXPECT_EQ(rows[0].functions, (std::vector<std::string>{"main", "compute"}));
}

TEST(Profile, InstructionsCarryModuleAndFunctionOffsets) {
  Capture c = tables();
  Profile p;
  add(p, 2, sample(1, {kLibc + 0x1234}));
  add(p, 2, sample(1, {0x12345678}));
  add(p, 1, sample(1, {0x401014}));
  p.add(sample(1, {})); // no pc read: still a sample, attributed nowhere
  std::vector<InstructionRow> rows = p.byInstruction(c, {});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].pc, 0x12345678u); // ties by address
  EXPECT_EQ(rows[0].module, "[unknown]");
  EXPECT_EQ(rows[0].function, "");
  EXPECT_EQ(rows[1].pc, kLibc + 0x1234);
  EXPECT_EQ(rows[1].module, "/usr/lib/libc.so.6");
  EXPECT_EQ(rows[1].moduleOffset, 0x1234u);
  EXPECT_EQ(rows[1].function, "read");
  EXPECT_EQ(rows[1].functionOffset, 0x34u);
  EXPECT_EQ(rows[1].inlined, (std::vector<std::string>{"inner", "outer"}));
  EXPECT_EQ(rows[2].pc, 0u);
  EXPECT_EQ(rows[2].samples, 1u);
  EXPECT_EQ(rows[3].pc, 0x401014u);
  EXPECT_EQ(rows[3].moduleOffset, 0x401014u); // not position-independent: bias 0
  EXPECT_EQ(rows[3].functionOffset, 0x14u);
}
