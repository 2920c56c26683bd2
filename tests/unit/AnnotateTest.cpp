// `strobe annotate` on hand-assembled x86-64 code, with expected listings written out by hand.
#include "report/Annotate.h"
#include "isa/Disassembler.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace strobe;

namespace {

// compute(x) at 0x401000:            demo.c line
//   0x401000  55              push rbp                          3
//   0x401001  48 89 e5        mov rbp, rsp                      3
//   0x401004  89 7d fc        mov dword ptr [rbp - 4], edi      4
//   0x401007  8b 45 fc        mov eax, dword ptr [rbp - 4]      4   30 samples
//   0x40100a  0f af c0        imul eax, eax                     4   50 samples
//   0x40100d  75 f8           jne 0x401007                      4
//   0x40100f  e8 ec 00 00 00  call 0x401100 (helper)            5   20 samples
//   0x401014  5d              pop rbp                           6
//   0x401015  c3              ret                               6
// helper at 0x401100 takes another 100 samples, so compute has 100 of 200.
class Annotate : public ::testing::Test {
protected:
  void SetUp() override {
    // A folder per test: ctest runs the tests of this fixture in parallel processes.
    directory = std::filesystem::path(::testing::TempDir()) /
                ("strobe_annotate_" +
                 std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(directory);
    source = (directory / "strobe_annotate_demo.c").string();
    std::ofstream(source) << "#include <stdio.h>\n"
                             "\n"
                             "int compute(int x) {\n"
                             "  x = x * x;\n"
                             "  helper();\n"
                             "}\n";
    c.header.pid = 7;
    c.header.program = "/opt/demo/demo";
    c.header.periodNs = 1000000;
    c.modules = {{"/opt/demo/demo", "", 0x400000, 0x402000, 0}};
    c.code[0x401000] = {0x55, 0x48, 0x89, 0xe5, 0x89, 0x7d, 0xfc, 0x8b, 0x45, 0xfc, 0x0f,
                        0xaf, 0xc0, 0x75, 0xf8, 0xe8, 0xec, 0x00, 0x00, 0x00, 0x5d, 0xc3};
    for (auto [address, line] : std::vector<std::pair<uint64_t, uint32_t>>{{0x401000, 3},
                                                                           {0x401001, 3},
                                                                           {0x401004, 4},
                                                                           {0x401007, 4},
                                                                           {0x40100a, 4},
                                                                           {0x40100d, 4},
                                                                           {0x40100f, 5},
                                                                           {0x401014, 6},
                                                                           {0x401015, 6}})
      c.instructionLines[address] = {"compute", 0x401000, 0x16, source, line, {}};
    c.symbols[0x401100] = {"helper", 0x401100, 0x10, "/src/util.c", 10, {}};
    c.symbols[0x401300] = {"compare", 0x401300, 0x10, "", 0, {}};
    sampleAt(0x401007, 30);
    sampleAt(0x40100a, 50);
    sampleAt(0x40100f, 20);
    sampleAt(0x401100, 100);
  }
  void TearDown() override { std::filesystem::remove_all(directory); }

  void sampleAt(uint64_t pc, int n, bool onCpu = true) {
    if (!c.symbols.count(pc))
      c.symbols[pc] = c.instructionLines.at(pc);
    for (int i = 0; i < n; ++i) {
      Sample s;
      s.tid = 1;
      s.onCpu = onCpu;
      s.stack = {pc};
      c.samples.push_back(s);
    }
  }

  std::string annotate(const std::string &function, bool assembly, bool source) {
    AnnotateOptions o;
    o.function = function;
    o.assembly = assembly;
    o.source = source;
    return renderAnnotate(c, o);
  }

  std::string error(const std::string &function) {
    try {
      annotate(function, true, false);
    } catch (const ReportError &e) {
      return e.what();
    }
    return "no error";
  }

  Capture c;
  std::string source;
  std::filesystem::path directory;
};

const char *const kListing = "samples     fn%  address   instruction\n"
                             "                           ; strobe_annotate_demo.c:3\n"
                             "                 0x401000  push rbp\n"
                             "                 0x401001  mov rbp, rsp\n"
                             "                           ; strobe_annotate_demo.c:4\n"
                             "                 0x401004  mov dword ptr [rbp - 4], edi\n"
                             "     30   30.0%  0x401007  mov eax, dword ptr [rbp - 4]\n"
                             "     50   50.0%  0x40100a  imul eax, eax\n"
                             "                 0x40100d  jne 0x401007 <compute+0x7>\n"
                             "                           ; strobe_annotate_demo.c:5\n"
                             "     20   20.0%  0x40100f  call 0x401100 <helper>\n"
                             "                           ; strobe_annotate_demo.c:6\n"
                             "                 0x401014  pop rbp\n"
                             "                 0x401015  ret\n"
                             "--------------------------------------\n"
                             "    100  100.0%            total\n";

} // namespace

TEST_F(Annotate, AssemblyListsEveryInstructionWithItsSamples) {
  EXPECT_EQ(annotate("compute", true, false),
            std::string("strobe annotate: compute at 0x401000 (demo), 100 of 200 samples (50.0%, "
                        "wall-clock)\n") +
                kListing);
}

TEST_F(Annotate, UnsampledPaddingNopsAreOneRow) {
  // padded() at 0x402000: mov eax, 0; three nops (10 + 10 + 3 bytes) of loop alignment; a
  // sampled one-byte nop; a lone unsampled nop; ret.
  c.code[0x402000] = {0xb8, 0x00, 0x00, 0x00, 0x00, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00,
                      0x00, 0x00, 0x00, 0x00, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00,
                      0x00, 0x00, 0x00, 0x0f, 0x1f, 0x00, 0x90, 0x0f, 0x1f, 0x00, 0xc3};
  c.symbols[0x40201c] = {"padded", 0x402000, 0x21, "", 0, {}};
  sampleAt(0x40201c, 5);
  const std::string out = annotate("padded", true, false);
  EXPECT_NE(out.find("\n                 0x402000  mov eax, 0\n"
                     "                 0x402005  nop (3 nops, 23 bytes of padding)\n"
                     "      5  100.0%  0x40201c  nop\n"
                     "                 0x40201d  nop dword ptr [rax]\n"
                     "                 0x402020  ret\n"),
            std::string::npos)
      << out;
}

TEST_F(Annotate, ABranchIntoPaddingSplitsItsRow) {
  // jmp +10 over a 10-byte nop into a run of two more (3 + 1 bytes); ret.
  c.code[0x402000] = {0xeb, 0x0a, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00,
                      0x00, 0x00, 0x00, 0x0f, 0x1f, 0x00, 0x90, 0xc3};
  c.symbols[0x402010] = {"jumps", 0x402000, 0x11, "", 0, {}};
  sampleAt(0x402010, 3);
  const std::string out = annotate("jumps", true, false);
  EXPECT_NE(out.find("\n                 0x402000  jmp 0x40200c <jumps+0xc>\n"
                     "                 0x402002  nop word ptr cs:[rax + rax]\n"
                     "                 0x40200c  nop (2 nops, 4 bytes of padding)\n"
                     "      3  100.0%  0x402010  ret\n"),
            std::string::npos)
      << out;
}

TEST_F(Annotate, SourceGroupsInstructionsByLine) {
  EXPECT_EQ(annotate("compute", false, true),
            "strobe annotate: compute at 0x401000 (demo), 100 of 200 samples (50.0%, "
            "wall-clock)\n"
            "source: " +
                source +
                "\n"
                "samples     fn%  line  source\n"
                "                    3  int compute(int x) {\n"
                "     80   80.0%     4    x = x * x;\n"
                "     20   20.0%     5    helper();\n"
                "                    6  }\n"
                "-----------------------------\n"
                "    100  100.0%        total\n");
}

TEST_F(Annotate, BothSectionsOneAfterTheOther) {
  std::string out = annotate("compute", true, true);
  size_t listing = out.find(kListing);
  ASSERT_NE(listing, std::string::npos) << out;
  EXPECT_EQ(out.substr(listing + std::string(kListing).size(), 9), "\nsource: ");
}

TEST_F(Annotate, InlinedLinesFromOtherFilesFollowTheFunctionsOwn) {
  c.instructionLines[0x40100f] = {"compute", 0x401000, 0x16, "/src/inline.h", 12, {"square"}};
  c.symbols[0x40100f] = c.instructionLines[0x40100f];
  std::string out = annotate("compute", true, true);
  EXPECT_NE(out.find("                           ; inline.h:12 [inlined: square]\n"
                     "     20   20.0%  0x40100f  call 0x401100 <helper>\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("samples     fn%         line  source\n"
                     "                           3  int compute(int x) {\n"
                     "     80   80.0%            4    x = x * x;\n"
                     "                           5    helper();\n"
                     "                           6  }\n"
                     "     20   20.0%  inline.h:12\n"),
            std::string::npos)
      << out;
}

TEST_F(Annotate, UnreadableSourceShowsLineNumbersOnly) {
  for (auto &[address, line] : c.instructionLines)
    line.file = "/nonexistent/demo.c";
  for (auto &[pc, symbol] : c.symbols)
    if (symbol.function == "compute")
      symbol.file = "/nonexistent/demo.c";
  EXPECT_EQ(annotate("compute", false, true),
            "strobe annotate: compute at 0x401000 (demo), 100 of 200 samples (50.0%, "
            "wall-clock)\n"
            "source: /nonexistent/demo.c is not readable; line numbers only\n"
            "samples     fn%  line  source\n"
            "                    3\n"
            "     80   80.0%     4\n"
            "     20   20.0%     5\n"
            "                    6\n"
            "-----------------------------\n"
            "    100  100.0%        total\n");
}

TEST_F(Annotate, AWideGapBetweenLinesIsElided) {
  c.instructionLines[0x401014].line = 20;
  c.instructionLines[0x401015].line = 20;
  std::string out = annotate("compute", false, true);
  EXPECT_NE(out.find("samples     fn%  line  source\n"
                     "                    3  int compute(int x) {\n"
                     "     80   80.0%     4    x = x * x;\n"
                     "     20   20.0%     5    helper();\n"
                     "                  ...\n"
                     "                   20\n"
                     "-----------------------------\n"),
            std::string::npos)
      << out;
}

TEST_F(Annotate, SamplesBetweenInstructionStartsAreCounted) {
  c.symbols[0x401002] = c.instructionLines.at(0x401001);
  sampleAt(0x401002, 5);
  std::string out = annotate("compute", true, false);
  EXPECT_NE(out.find("105 of 205 samples"), std::string::npos) << out;
  EXPECT_NE(out.find("    105  100.0%            total\n"
                     "5 samples hit addresses where no listed instruction starts\n"),
            std::string::npos)
      << out;
}

TEST_F(Annotate, OnCpuCountsOnlyRunningSamples) {
  sampleAt(0x401014, 100, false);
  AnnotateOptions o;
  o.function = "compute";
  o.onCpuOnly = true;
  std::string out = renderAnnotate(c, o);
  EXPECT_NE(out.find("compute at 0x401000 (demo), 100 of 200 samples (50.0%, on-CPU)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("                 0x401014  pop rbp\n"), std::string::npos) << out;
  o.onCpuOnly = false;
  out = renderAnnotate(c, o);
  EXPECT_NE(out.find("200 of 300 samples (66.7%, wall-clock)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    100   50.0%  0x401014  pop rbp\n"), std::string::npos) << out;
}

TEST_F(Annotate, SubstringAndAddressFindTheFunction) {
  EXPECT_EQ(annotate("ompu", true, false), annotate("compute", true, false));
  EXPECT_EQ(annotate("0x40100a", true, false), annotate("compute", true, false));
}

TEST_F(Annotate, UnknownAndAmbiguousNamesAreErrors) {
  EXPECT_EQ(error("nope"), "no function matches 'nope'; most sampled: compute, helper");
  EXPECT_EQ(error("comp"), "'comp' matches 2 functions: compare at 0x401300 (demo), compute at "
                           "0x401000 (demo); name one exactly or by address");
}

TEST_F(Annotate, MissingCodeIsSaid) {
  EXPECT_EQ(annotate("helper", true, false),
            "strobe annotate: helper at 0x401100 (demo), 100 of 200 samples (50.0%, wall-clock)\n"
            "no machine code of helper in this capture\n");
}

TEST_F(Annotate, BytesThatDoNotDecodeAreShownAsData) {
  c.code[0x401000].back() = 0x0f; // ret -> a truncated two-byte opcode
  std::string out = annotate("compute", true, false);
  EXPECT_NE(out.find("                 0x401015  .byte 0x0f\n"), std::string::npos) << out;
}

TEST(Disassembler, DecodesAArch64) {
  Disassembler d(Isa::AArch64);
  std::vector<uint8_t> bytes = {0xfd, 0x7b, 0xbf, 0xa9, 0x04, 0x00, 0x00, 0x94,
                                0xc0, 0x03, 0x5f, 0xd6, 0xff, 0xff, 0xff, 0xff};
  auto stp = d.decode(bytes, 0x1000);
  ASSERT_TRUE(stp);
  EXPECT_EQ(stp->length, 4u);
  EXPECT_EQ(stp->text, "stp x29, x30, [sp, #-0x10]!");
  EXPECT_FALSE(stp->branchTarget);
  auto bl = d.decode(std::span(bytes).subspan(4), 0x1004);
  ASSERT_TRUE(bl);
  EXPECT_EQ(bl->text, "bl #0x1014");
  EXPECT_EQ(bl->branchTarget, 0x1014u);
  auto ret = d.decode(std::span(bytes).subspan(8), 0x1008);
  ASSERT_TRUE(ret);
  EXPECT_EQ(ret->text, "ret");
  EXPECT_FALSE(d.decode(std::span(bytes).subspan(12), 0x100c));
}
