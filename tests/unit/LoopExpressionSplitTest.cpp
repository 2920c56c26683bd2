// `strobe loop --split expr:VARIABLE` against a fake target: the variable is found through
// Target::dataAddress and read at each sample of the loop's thread.
#include "FakeTarget.h"

#include "io/TraceFile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace strobe;

namespace {

constexpr uint64_t kFuncM = 0x401000;
constexpr uint64_t kIteration = 0x601040;
constexpr uint32_t kFirstValue = 0x0a0b0c00; // bytes differ, so a wrong byte order shows

// func_M is `nop; ret`; `iteration` is a 4-byte counter that advances at every read.
class CountingTarget : public strobe::testing::FakeTarget {
public:
  std::vector<uint32_t> valuesRead;

  CountingTarget() {
    script[1001] = {kFuncM, kFuncM + 1};
    script[1002] = {0x402030};
    symbolTable[kFuncM] = {"func_M", kFuncM, 2, "/src/funcm.c", 20, {}};
    variables["iteration"] = {kIteration, 4};
    variables["big"] = {0x601100, 16};
  }
  std::vector<uint64_t> resolve(std::string_view location) override {
    return location == "func_M" ? std::vector<uint64_t>{kFuncM} : std::vector<uint64_t>{};
  }
  std::vector<uint8_t> readMemory(uint64_t address, size_t size) override {
    if (address == kFuncM && size == 2)
      return {0x90, 0xc3};
    if (address != kIteration || size != 4)
      return {};
    uint32_t value = kFirstValue + static_cast<uint32_t>(valuesRead.size());
    valuesRead.push_back(value);
    return {static_cast<uint8_t>(value), static_cast<uint8_t>(value >> 8),
            static_cast<uint8_t>(value >> 16), static_cast<uint8_t>(value >> 24)};
  }
};

struct LoopExpressionSplit : ::testing::Test {
  CountingTarget target;
  Session session{&target, "fake"};

  std::string run(const std::string &line, bool expectOk) {
    std::string out;
    EXPECT_EQ(session.execute(line, out), expectOk) << line << " -> " << out;
    return out;
  }
};

} // namespace

TEST_F(LoopExpressionSplit, ReadsTheVariableAtEachSampleOfTheLoopThread) {
  std::string out = run(
      "loop --at func_M --split expr:iteration --duration 200ms --frequency 1000 --overhead 100",
      true);
  EXPECT_NE(out.find("'iteration' read at each sample"), std::string::npos) << out;

  const std::string path =
      (std::filesystem::temp_directory_path() / ("loopexpr-" + std::to_string(getpid()))).string();
  run("save " + path, true);
  LoadedTrace loaded = loadCapture(path);
  std::filesystem::remove(path);
  const Capture &c = loaded.capture;
  ASSERT_TRUE(c.loop.has_value());
  EXPECT_EQ(c.loop->expression, "iteration");

  // One read per sample of thread 1001 (the current thread), none for thread 1002.
  ASSERT_GT(target.reads[1001], 5u);
  EXPECT_EQ(target.valuesRead.size(), target.reads[1001]);
  std::vector<uint64_t> recorded;
  for (const auto &[index, value] : c.loop->expressionValues) {
    ASSERT_LT(index, c.samples.size());
    EXPECT_EQ(c.samples[index].tid, 1001u);
    recorded.push_back(value);
  }
  ASSERT_EQ(recorded.size(), target.valuesRead.size());
  for (size_t i = 0; i < recorded.size(); ++i)
    EXPECT_EQ(recorded[i], kFirstValue + i) << "sample " << i;
}

TEST_F(LoopExpressionSplit, AnUnknownNameSaysWhatToGive) {
  std::string out = run("loop --at func_M --split expr:nosuch --duration 20ms", false);
  EXPECT_NE(out.find("'nosuch' is neither a register nor a global or static variable"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("expr:REGISTER (e.g. expr:rax), expr:VARIABLE or expr:*ADDRESS"),
            std::string::npos)
      << out;
  EXPECT_FALSE(target.armed) << "nothing may be sampled for a split that cannot be read";
  EXPECT_TRUE(target.verdicts.empty());
}

TEST_F(LoopExpressionSplit, AVariableWiderThanEightBytesIsRefused) {
  std::string out = run("loop --at func_M --split expr:big --duration 20ms", false);
  EXPECT_NE(out.find("'big' is 16 bytes; an iteration number must be an integer of 1 to 8 bytes"),
            std::string::npos)
      << out;
  EXPECT_TRUE(target.verdicts.empty());
}

TEST_F(LoopExpressionSplit, ARegisterNeedsNoVariable) {
  std::string out = run("loop --at func_M --split expr:rbx --duration 20ms --frequency 1000", true);
  EXPECT_NE(out.find("'rbx' read at each sample"), std::string::npos) << out;
  EXPECT_TRUE(target.valuesRead.empty());
}
