// `strobe profile` reports on a hand-built capture; every expected number was worked out by hand:
// share p = n / N, interval 1.96 * sqrt(p (1 - p) / N), time n x 1 ms.
#include "report/Annotate.h"
#include "report/ProfileReport.h"
#include "report/Table.h"

#include <gtest/gtest.h>
#include <profile.pb.h>
#include <zlib.h>

using namespace strobe;

namespace {

constexpr uint64_t kMain = 101, kWorker = 102;
constexpr uint64_t kLibc = 0x7f0000000000;

void addSamples(Capture &c, int n, uint64_t tid, std::vector<uint64_t> stack, bool onCpu = true,
                bool inSyscall = false) {
  for (int i = 0; i < n; ++i) {
    Sample s;
    s.timeNs = c.samples.size() * 1000000;
    s.tid = tid;
    s.onCpu = onCpu;
    s.inSyscall = inSyscall;
    s.stack = stack;
    c.samples.push_back(s);
  }
}

// 1000 samples at 1 ms: thread main 700 in the executable, thread worker 300 spread over libc,
// the vDSO, a system call and an address no module covers.
Capture demo() {
  Capture c;
  c.header.pid = 4242;
  c.header.program = "/opt/demo/demo";
  c.header.periodNs = 1000000;
  c.header.stackDepth = 2;
  c.threads = {{kMain, "main"}, {kWorker, "worker"}};
  c.modules = {{"/opt/demo/demo", "", 0x400000, 0x402000, 0},
               {"/usr/lib/x86_64-linux-gnu/libc.so.6", "", kLibc, kLibc + 0x200000, kLibc},
               {"[vdso]", "", 0x7fff0000, 0x7fff2000, 0x7fff0000}};
  c.symbols[0x401010] = {"compute", 0x401000, 0x40, "/src/demo.c", 10, {}};
  c.symbols[0x401014] = {"compute", 0x401000, 0x40, "/src/demo.c", 10, {}};
  c.symbols[0x401020] = {"compute", 0x401000, 0x40, "/src/demo.c", 11, {}};
  c.symbols[0x401100] = {"helper", 0x401100, 0x20, "/src/util.c", 10, {}};
  c.symbols[0x401205] = {"main", 0x401200, 0x40, "/src/demo.c", 30, {}};
  c.symbols[0x401215] = {"main", 0x401200, 0x40, "/src/demo.c", 31, {}};
  c.symbols[kLibc + 0x1234] = {"read", kLibc + 0x1200, 0x80, "", 0, {}};
  c.symbols[kLibc + 0x1250] = {"memcpy", kLibc + 0x1250, 0x100, "", 0, {}};
  c.symbols[0x7fff0100] = {"__vdso_clock_gettime", 0x7fff0100, 0x50, "", 0, {}};
  addSamples(c, 300, kMain, {0x401010, 0x401205});
  addSamples(c, 100, kMain, {0x401014, 0x401205});
  addSamples(c, 200, kMain, {0x401020, 0x401215});
  addSamples(c, 100, kMain, {0x401100, 0x401215});
  addSamples(c, 150, kWorker, {kLibc + 0x1234, 0x401215}, false, true);
  addSamples(c, 50, kWorker, {kLibc + 0x1250, 0x401205});
  addSamples(c, 50, kWorker, {0x7fff0100, 0x401205});
  addSamples(c, 50, kWorker, {0x12345678});
  return c;
}

std::string render(const Capture &c, ProfileOptions::By by, bool json = false) {
  ProfileOptions o;
  o.by = by;
  o.format = json ? ProfileOptions::Format::Json : ProfileOptions::Format::Table;
  return renderProfile(c, o);
}

// Accepts exactly the JSON grammar (RFC 8259) for the values a report writes.
class JsonChecker {
public:
  explicit JsonChecker(std::string_view text) : s_(text) {}
  bool valid() {
    bool ok = value();
    skip();
    return ok && i_ == s_.size();
  }

private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word)
      return false;
    i_ += word.size();
    return true;
  }
  bool string() {
    if (!eat('"'))
      return false;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (static_cast<unsigned char>(s_[i_]) < 0x20)
        return false;
      i_ += s_[i_] == '\\' ? 2 : 1;
    }
    return eat('"');
  }
  bool number() {
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-')
      ++i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.'))
      ++i_;
    return i_ > start;
  }
  bool value() {
    skip();
    if (i_ >= s_.size())
      return false;
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      if (eat('}'))
        return true;
      do {
        if (!string() || !eat(':') || !value())
          return false;
      } while (eat(','));
      return eat('}');
    }
    if (c == '[') {
      ++i_;
      if (eat(']'))
        return true;
      do {
        if (!value())
          return false;
      } while (eat(','));
      return eat(']');
    }
    if (c == '"')
      return string();
    return literal("null") || literal("true") || literal("false") || number();
  }

  std::string_view s_;
  size_t i_ = 0;
};

} // namespace

TEST(Report, DurationsKeepThreeSignificantDigits) {
  EXPECT_EQ(formatDuration(0), "0 ns");
  EXPECT_EQ(formatDuration(999), "999 ns");
  EXPECT_EQ(formatDuration(1000), "1.00 us");
  EXPECT_EQ(formatDuration(999400), "999 us");
  EXPECT_EQ(formatDuration(999600), "1.00 ms");
  EXPECT_EQ(formatDuration(45600000), "45.6 ms");
  EXPECT_EQ(formatDuration(600000000), "600 ms");
  EXPECT_EQ(formatDuration(1234000000), "1.23 s");
  EXPECT_EQ(formatDuration(12345000000), "12.3 s");
  EXPECT_EQ(formatDuration(250000000000), "250 s");
}

TEST(Report, SharesAndIntervals) {
  Capture c;
  c.header.periodNs = 1000000;
  c.modules = {{"/bin/app", "", 0x1000, 0x9000, 0}};
  c.symbols[0x1000] = {"alpha", 0x1000, 0x10, "", 0, {}};
  c.symbols[0x2000] = {"beta", 0x2000, 0x10, "", 0, {}};
  c.symbols[0x3000] = {"gamma", 0x3000, 0x10, "", 0, {}};
  addSamples(c, 100, 1, {0x3000});
  addSamples(c, 600, 1, {0x1000});
  addSamples(c, 300, 1, {0x2000});
  EXPECT_EQ(render(c, ProfileOptions::By::Function),
            "strobe profile: 1000 samples (wall-clock), 1 thread, period 1.00 ms, 1.00 s sampled\n"
            "samples       %  ±95%    time  module  function\n"
            "    600   60.0%  ±3.0  600 ms  app     alpha\n"
            "    300   30.0%  ±2.8  300 ms  app     beta\n"
            "    100   10.0%  ±1.9  100 ms  app     gamma\n"
            "-----------------------------------------------\n"
            "   1000  100.0%        1.00 s          total\n");
}

TEST(Report, FunctionsSortBySamplesThenName) {
  EXPECT_EQ(render(demo(), ProfileOptions::By::Function),
            "strobe profile: 1000 samples (wall-clock), 2 threads, period 1.00 ms, 1.00 s sampled\n"
            "samples       %  ±95%     time  module     function\n"
            "    600   60.0%  ±3.0   600 ms  demo       compute\n"
            "    150   15.0%  ±2.2   150 ms  libc.so.6  read\n"
            "    100   10.0%  ±1.9   100 ms  demo       helper\n"
            "     50    5.0%  ±1.4  50.0 ms  [unknown]  [unknown]\n"
            "     50    5.0%  ±1.4  50.0 ms  [vdso]     __vdso_clock_gettime\n"
            "     50    5.0%  ±1.4  50.0 ms  libc.so.6  memcpy\n"
            "---------------------------------------------------\n"
            "   1000  100.0%         1.00 s             total\n");
}

TEST(Report, CallersShowTheirShareOfEachFunction) {
  ProfileOptions o;
  o.callers = true;
  o.top = 2;
  EXPECT_EQ(renderProfile(demo(), o),
            "strobe profile: 1000 samples (wall-clock), 2 threads, period 1.00 ms, 1.00 s sampled\n"
            "samples       %  ±95%    time  module     function\n"
            "    600   60.0%  ±3.0  600 ms  demo       compute\n"
            "    400                        demo         <-  66.7% main (demo.c:30)\n"
            "    200                        demo         <-  33.3% main (demo.c:31)\n"
            "    150   15.0%  ±2.2  150 ms  libc.so.6  read\n"
            "    150                        demo         <- 100.0% main (demo.c:31)\n"
            "    250   25.0%  ±2.7  250 ms             (4 more)\n"
            "--------------------------------------------------\n"
            "   1000  100.0%        1.00 s             total\n");
}

TEST(Report, CallersBeyondTopAreSummed) {
  ProfileOptions o;
  o.callers = true;
  o.top = 1;
  EXPECT_EQ(renderProfile(demo(), o),
            "strobe profile: 1000 samples (wall-clock), 2 threads, period 1.00 ms, 1.00 s sampled\n"
            "samples       %  ±95%    time  module  function\n"
            "    600   60.0%  ±3.0  600 ms  demo    compute\n"
            "    400                        demo      <-  66.7% main (demo.c:30)\n"
            "    200                                  <-  33.3% (1 more)\n"
            "    400   40.0%  ±3.0  400 ms          (5 more)\n"
            "-----------------------------------------------\n"
            "   1000  100.0%        1.00 s          total\n");
}

TEST(Report, OnCpuLeavesOutBlockedSamples) {
  ProfileOptions o;
  o.onCpuOnly = true;
  o.top = 1;
  // 850 on-CPU samples: compute 600 / 850 = 70.6 %, interval 1.96 * sqrt(.706 * .294 / 850).
  EXPECT_EQ(renderProfile(demo(), o),
            "strobe profile: 850 samples (on-CPU, of 1000), 2 threads, period 1.00 ms, 850 ms "
            "sampled\n"
            "samples       %  ±95%    time  module  function\n"
            "    600   70.6%  ±3.1  600 ms  demo    compute\n"
            "    250   29.4%  ±3.1  250 ms          (4 more)\n"
            "-----------------------------------------------\n"
            "    850  100.0%        850 ms          total\n");
}

TEST(Report, ThreadFilter) {
  ProfileOptions o;
  o.tid = kWorker;
  o.by = ProfileOptions::By::Module;
  // 300 samples: 150 -> 50.0 % ±5.7, 50 -> 16.7 % ±4.2.
  EXPECT_EQ(renderProfile(demo(), o),
            "strobe profile: 300 samples (wall-clock), thread 102 (worker), period 1.00 ms, "
            "300 ms sampled\n"
            "samples       %  ±95%     time  module\n"
            "    150   50.0%  ±5.7   150 ms  [syscall]\n"
            "     50   16.7%  ±4.2  50.0 ms  libc.so.6\n"
            "     50   16.7%  ±4.2  50.0 ms  [unknown]\n"
            "     50   16.7%  ±4.2  50.0 ms  [vdso]\n"
            "--------------------------------------\n"
            "    300  100.0%         300 ms  total\n");
}

TEST(Report, ProcessBySpaceMatrix) {
  EXPECT_EQ(render(demo(), ProfileOptions::By::Process),
            "strobe profile: 1000 samples (wall-clock), 2 threads, period 1.00 ms, 1.00 s sampled\n"
            " pid  process  demo  libc.so.6  [vdso]  [syscall]  [unknown]  samples       %  ±95%"
            "    time\n"
            "4242  demo      700         50      50        150         50     1000  100.0%  ±0.0"
            "  1.00 s\n"
            "-----------------------------------------------------------------------------------"
            "--------\n"
            "      total     700         50      50        150         50     1000  100.0%      "
            "  1.00 s\n");
}

TEST(Report, ThreadBySpaceMatrix) {
  EXPECT_EQ(render(demo(), ProfileOptions::By::Thread),
            "strobe profile: 1000 samples (wall-clock), 2 threads, period 1.00 ms, 1.00 s sampled\n"
            "tid  thread  demo  libc.so.6  [vdso]  [syscall]  [unknown]  samples       %  ±95%"
            "    time\n"
            "101  main     700          -       -          -          -      700   70.0%  ±2.8"
            "  700 ms\n"
            "102  worker     -         50      50        150         50      300   30.0%  ±2.8"
            "  300 ms\n"
            "---------------------------------------------------------------------------------"
            "--------\n"
            "     total    700         50      50        150         50     1000  100.0%      "
            "  1.00 s\n");
}

TEST(Report, LinesKeepFilesApart) {
  std::string out = render(demo(), ProfileOptions::By::Line);
  EXPECT_NE(out.find("    400   40.0%  ±3.0   400 ms  demo.c:10       compute\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    200   20.0%  ±2.5   200 ms  demo.c:11       compute\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    150   15.0%  ±2.2   150 ms  [no line info]  read\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("    100   10.0%  ±1.9   100 ms  util.c:10       helper\n"), std::string::npos)
      << out;
  std::string json = render(demo(), ProfileOptions::By::Line, true);
  EXPECT_NE(json.find("{\"samples\":100,\"percent\":10.00,\"ci95\":1.86,\"timeNs\":100000000,"
                      "\"function\":\"helper\",\"file\":\"/src/util.c\",\"line\":10,"
                      "\"functions\":[\"helper\"]}"),
            std::string::npos)
      << json;
}

TEST(Report, ALineInlinedIntoSeveralFunctionsNamesThemAll) {
  Capture c = demo();
  // util.c:10 inlined into main as well: 100 samples in helper, 40 more in main.
  c.symbols[0x401230] = {"main", 0x401200, 0x40, "/src/util.c", 10, {"helper"}};
  addSamples(c, 40, kMain, {0x401230});
  std::string out = render(c, ProfileOptions::By::Line);
  EXPECT_NE(out.find("  util.c:10       helper and 1 more\n"), std::string::npos) << out;
  std::string json = render(c, ProfileOptions::By::Line, true);
  EXPECT_NE(json.find("{\"samples\":140,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"function\":\"helper\",\"file\":\"/src/util.c\",\"line\":10,"
                      "\"functions\":[\"helper\",\"main\"]}"),
            std::string::npos)
      << json;
}

TEST(Report, Instructions) {
  std::string out = render(demo(), ProfileOptions::By::Instruction);
  EXPECT_NE(out.find("samples       %  ±95%     time  address         module+offset         "
                     "function+offset\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    300   30.0%  ±2.8   300 ms  0x401010        demo+0x401010         "
                     "compute+0x10\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    150   15.0%  ±2.2   150 ms  0x7f0000001234  libc.so.6+0x1234      "
                     "read+0x34\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("     50    5.0%  ±1.4  50.0 ms  0x12345678      [unknown]+0x12345678  "
                     "[unknown]\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("     50    5.0%  ±1.4  50.0 ms  0x7fff0100      [vdso]+0x100          "
                     "__vdso_clock_gettime+0x0\n"),
            std::string::npos)
      << out;
}

TEST(Report, InclusiveColumnWithStacks) {
  Capture c;
  c.header.periodNs = 2000000;
  c.header.stackDepth = 8;
  c.modules = {{"/bin/app", "", 0x1000, 0x9000, 0}};
  c.symbols[0x1010] = {"leaf", 0x1000, 0x100, "", 0, {}};
  c.symbols[0x1105] = {"mid", 0x1100, 0x100, "", 0, {}};
  c.symbols[0x1205] = {"main", 0x1200, 0x100, "", 0, {}};
  addSamples(c, 3, 1, {0x1010, 0x1105, 0x1205});
  addSamples(c, 1, 1, {0x1105, 0x1205});
  // 4 samples of 2 ms: leaf 75.0 % ±42.4, mid 25.0 % ±42.4.
  EXPECT_EQ(render(c, ProfileOptions::By::Function),
            "strobe profile: 4 samples (wall-clock), 1 thread, period 2.00 ms, 8.00 ms sampled\n"
            "samples       %   ±95%     time   incl%  module  function\n"
            "      3   75.0%  ±42.4  6.00 ms   75.0%  app     leaf\n"
            "      1   25.0%  ±42.4  2.00 ms  100.0%  app     mid\n"
            "      0    0.0%   ±0.0     0 ns  100.0%  app     main\n"
            "---------------------------------------------------------\n"
            "      4  100.0%         8.00 ms                  total\n");
}

TEST(Report, JsonHasTheSameRows) {
  ProfileOptions o;
  o.format = ProfileOptions::Format::Json;
  o.callers = true;
  o.top = 1;
  std::string json = renderProfile(demo(), o);
  EXPECT_TRUE(JsonChecker(json).valid()) << json;
  EXPECT_EQ(json,
            "{\"report\":\"profile\",\"by\":\"function\",\"mode\":\"wall\",\"tid\":null,"
            "\"samples\":1000,\"allSamples\":1000,\"threads\":2,\"periodNs\":1000000,"
            "\"rows\":[{\"samples\":600,\"percent\":60.00,\"ci95\":3.04,\"timeNs\":600000000,"
            "\"function\":\"compute\",\"module\":\"/opt/demo/demo\","
            "\"otherCallers\":{\"rows\":1,\"samples\":200},\"callers\":["
            "{\"samples\":400,\"function\":\"main\",\"module\":\"/opt/demo/demo\","
            "\"file\":\"/src/demo.c\",\"line\":30,\"share\":66.67}]}],"
            "\"others\":{\"samples\":400,\"percent\":40.00,\"ci95\":3.04,\"timeNs\":400000000,"
            "\"rows\":5},"
            "\"total\":{\"samples\":1000,\"percent\":100.00,\"timeNs\":1000000000}}\n");
  for (auto by :
       {ProfileOptions::By::Process, ProfileOptions::By::Thread, ProfileOptions::By::Module,
        ProfileOptions::By::Line, ProfileOptions::By::Instruction}) {
    std::string doc = render(demo(), by, true);
    EXPECT_TRUE(JsonChecker(doc).valid()) << doc;
  }
  std::string matrix = render(demo(), ProfileOptions::By::Thread, true);
  EXPECT_NE(matrix.find("{\"tid\":102,\"name\":\"worker\",\"samples\":300,\"percent\":30.00,"
                        "\"ci95\":2.84,\"timeNs\":300000000,\"spaces\":{"
                        "\"/usr/lib/x86_64-linux-gnu/libc.so.6\":50,\"[vdso]\":50,"
                        "\"[syscall]\":150,\"[unknown]\":50}}"),
            std::string::npos)
      << matrix;
}

TEST(Report, JsonEscapesStrings) {
  EXPECT_EQ(json::quote("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
  EXPECT_TRUE(JsonChecker(json::quote("tab\there")).valid());
}

TEST(Report, NothingToShowIsOneLine) {
  Capture empty;
  EXPECT_EQ(render(empty, ProfileOptions::By::Function),
            "strobe profile: no samples in this capture\n");
  ProfileOptions o;
  o.tid = 99;
  EXPECT_EQ(renderProfile(demo(), o),
            "strobe profile: no samples of thread 99 (sampled threads: 101, 102)\n");
  Capture blocked = demo();
  for (Sample &s : blocked.samples)
    s.onCpu = false;
  o.tid = kWorker;
  o.onCpuOnly = true;
  EXPECT_EQ(renderProfile(blocked, o), "strobe profile: no on-CPU samples of thread 102 (worker) "
                                       "among 300; --wall counts them all\n");
  o.format = ProfileOptions::Format::Json;
  std::string json = renderProfile(blocked, o);
  EXPECT_TRUE(JsonChecker(json).valid()) << json;
  EXPECT_NE(json.find("\"rows\":[]"), std::string::npos);
}

TEST(Report, FoldedStacksRunFromTheOutermostCallerToTheSampledFunction) {
  Capture c = demo();
  addSamples(c, 10, kWorker, {kLibc + 0x5000, 0x401205}); // libc, but no symbol there
  ProfileOptions o;
  o.format = ProfileOptions::Format::Folded;
  // The hottest first, equal counts by text ('[' sorts before letters).
  EXPECT_EQ(renderProfile(c, o), "main;compute 600\n"
                                 "main;read 150\n"
                                 "main;helper 100\n"
                                 "[unknown] 50\n"
                                 "main;__vdso_clock_gettime 50\n"
                                 "main;memcpy 50\n"
                                 "main;[libc.so.6] 10\n");
  o.onCpuOnly = true; // read's 150 samples are off the CPU
  o.tid = kWorker;
  EXPECT_EQ(renderProfile(c, o), "[unknown] 50\n"
                                 "main;__vdso_clock_gettime 50\n"
                                 "main;memcpy 50\n"
                                 "main;[libc.so.6] 10\n");
}

TEST(Report, FoldedStacksKeepDeepFramesAndMergeWhatTheyNameAlike) {
  Capture c = demo();
  c.header.stackDepth = 4;
  c.samples.clear();
  // compute called from helper called from main; twice in a row from two sites of main.
  addSamples(c, 3, kMain, {0x401010, 0x401100, 0x401205});
  addSamples(c, 2, kMain, {0x401020, 0x401100, 0x401215});
  addSamples(c, 4, kMain, {0x401014, 0x401100, 0x401205, 0x401215});
  c.symbols[kLibc + 0x1300] = {"compute", kLibc + 0x1300, 0x10, "", 0, {}}; // another module's
  addSamples(c, 1, kMain, {kLibc + 0x1300, 0x401100, 0x401205});
  ProfileOptions o;
  o.format = ProfileOptions::Format::Folded;
  EXPECT_EQ(renderProfile(c, o), "main;helper;compute 6\n"
                                 "main;main;helper;compute 4\n");
}

TEST(Report, FoldedStacksWithNothingToShowAreAnError) {
  ProfileOptions o;
  o.format = ProfileOptions::Format::Folded;
  EXPECT_THROW(renderProfile(Capture{}, o), ReportError);
  o.tid = 99;
  try {
    renderProfile(demo(), o);
    ADD_FAILURE() << "no exception";
  } catch (const ReportError &e) {
    EXPECT_STREQ(e.what(), "no samples of thread 99 (sampled threads: 101, 102)");
  }
}

// The profile a --pprof report holds, gunzipped and parsed.
perftools::profiles::Profile parsePprof(const std::string &gzipped) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + 15), Z_OK);
  std::string raw(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(gzipped.data()));
  z.avail_in = static_cast<uInt>(gzipped.size());
  z.next_out = reinterpret_cast<Bytef *>(raw.data());
  z.avail_out = static_cast<uInt>(raw.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  raw.resize(z.total_out);
  inflateEnd(&z);
  perftools::profiles::Profile profile;
  EXPECT_TRUE(profile.ParseFromString(raw));
  return profile;
}

TEST(Report, PprofKeepsEveryStackWithItsAddressesLinesAndThread) {
  ProfileOptions o;
  o.format = ProfileOptions::Format::Pprof;
  const auto p = parsePprof(renderProfile(demo(), o));
  auto str = [&](int64_t i) { return p.string_table(static_cast<int>(i)); };
  EXPECT_EQ(str(0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(str(p.sample_type(0).type()) + "/" + str(p.sample_type(0).unit()), "samples/count");
  EXPECT_EQ(str(p.sample_type(1).type()) + "/" + str(p.sample_type(1).unit()), "wall/nanoseconds");
  EXPECT_EQ(p.period(), 1000000);
  // One sample per distinct thread and stack (8 in demo()), each with its count and time.
  ASSERT_EQ(p.sample_size(), 8);
  int64_t total = 0;
  for (const auto &sample : p.sample()) {
    ASSERT_EQ(sample.value_size(), 2);
    EXPECT_EQ(sample.value(1), sample.value(0) * 1000000);
    total += sample.value(0);
  }
  EXPECT_EQ(total, 1000);

  auto location = [&](uint64_t id) -> const perftools::profiles::Location & {
    for (const auto &l : p.location())
      if (l.id() == id)
        return l;
    ADD_FAILURE() << "no location " << id;
    return p.location(0);
  };
  auto function = [&](uint64_t id) {
    for (const auto &f : p.function())
      if (f.id() == id)
        return str(f.name()) + "@" + str(f.filename());
    return std::string("none");
  };
  // Sorted by thread, then stack: main's {0x401010, 0x401205} x 300 comes first.
  const auto &first = p.sample(0);
  EXPECT_EQ(first.value(0), 300);
  ASSERT_EQ(first.location_id_size(), 2);
  const auto &leaf = location(first.location_id(0));
  const auto &caller = location(first.location_id(1));
  EXPECT_EQ(leaf.address(), 0x401010u);
  EXPECT_EQ(caller.address(), 0x401205u);
  ASSERT_EQ(leaf.line_size(), 1);
  ASSERT_EQ(caller.line_size(), 1);
  EXPECT_EQ(function(leaf.line(0).function_id()), "compute@/src/demo.c");
  EXPECT_EQ(leaf.line(0).line(), 10);
  EXPECT_EQ(function(caller.line(0).function_id()), "main@/src/demo.c");
  EXPECT_EQ(caller.line(0).line(), 30);
  ASSERT_EQ(first.label_size(), 2);
  EXPECT_EQ(str(first.label(0).key()), "thread id");
  EXPECT_EQ(first.label(0).num(), 101);
  EXPECT_EQ(str(first.label(1).key()) + "=" + str(first.label(1).str()), "thread=main");
  // The mapping of the executable, by its path.
  const auto &mapping = p.mapping(static_cast<int>(leaf.mapping_id()) - 1);
  EXPECT_EQ(mapping.id(), leaf.mapping_id());
  EXPECT_EQ(str(mapping.filename()), "/opt/demo/demo");
  EXPECT_EQ(mapping.memory_start(), 0x400000u);
  EXPECT_EQ(mapping.memory_limit(), 0x402000u);
  // The pc no module or symbol covers, a bare address: the worker's lowest stack, after main's
  // four.
  const auto &unknown = p.sample(4);
  EXPECT_EQ(unknown.value(0), 50);
  EXPECT_EQ(unknown.label(0).num(), 102);
  const auto &bare = location(unknown.location_id(0));
  EXPECT_EQ(bare.address(), 0x12345678u);
  EXPECT_EQ(bare.mapping_id(), 0u);
  EXPECT_EQ(bare.line_size(), 0);
}

TEST(Report, PprofOnCpuCountsCpuTimeOnly) {
  ProfileOptions o;
  o.format = ProfileOptions::Format::Pprof;
  o.onCpuOnly = true;
  const auto p = parsePprof(renderProfile(demo(), o));
  EXPECT_EQ(p.string_table(static_cast<int>(p.sample_type(1).type())), "cpu");
  int64_t total = 0;
  for (const auto &sample : p.sample())
    total += sample.value(0);
  EXPECT_EQ(total, 850); // read's 150 samples were off the CPU
  EXPECT_THROW(renderProfile(Capture{}, o), ReportError);
}

TEST(Report, LiveProfileRendersLikeTheCapture) {
  Capture c = demo();
  Profile live;
  for (const Sample &s : c.samples)
    live.add(s);
  ProfileOptions o;
  o.by = ProfileOptions::By::Line;
  EXPECT_EQ(renderProfile(c, live, o), renderProfile(c, o));
}

TEST(Table, AlignsColumnsNestsChildrenAndKeepsTextOnlyRowsOutOfJson) {
  Table table({{"n", "n"}, {"name", "name", Table::Align::Left}, {"±", ""}}, "kids");
  Table::Row parent{{{"12", "12"}, {"alpha", "\"alpha\""}, {"±1", ""}}, {}, {}};
  parent.children.push_back({{{"3", "3"}, {"  beta", "\"beta\""}, {}}, {}, {}});
  parent.children.push_back({{{"9", ""}, {"  (rest)", ""}, {}}, {}, {}, true});
  parent.extra.add("path", json::quote("/a/alpha"));
  table.add(std::move(parent));
  table.setTotal({{{"12", "12"}, {"total", ""}, {}}, {}, {}});
  EXPECT_EQ(table.text(), " n  name       ±\n"
                          "12  alpha     ±1\n"
                          " 3    beta\n"
                          " 9    (rest)\n"
                          "----------------\n"
                          "12  total\n");
  json::Object doc;
  table.addJson(doc);
  EXPECT_EQ(doc.str(), "{\"rows\":[{\"n\":12,\"name\":\"alpha\",\"path\":\"/a/alpha\","
                       "\"kids\":[{\"n\":3,\"name\":\"beta\"}]}],\"total\":{\"n\":12}}");
}
