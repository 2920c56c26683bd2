#include "LoopCaptureFixture.h"

#include "report/LoopReport.h"

#include <gtest/gtest.h>

namespace strobe {
namespace {

using namespace loop_fixture;

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out.push_back(text.substr(start, end - start));
  return out;
}

TEST(LoopReport, OneLinePerInstructionInExecutionOrder) {
  Capture capture = sampledCapture(std::vector<std::vector<uint64_t>>(70, kSpecCallees), 7);
  StepTrace truth = steppedIteration(kSpecCallees);
  std::string text =
      renderLoop(capture, rebuildLoop(capture, {LoopMode::Count, true}, &truth), false);
  std::vector<std::string> out = lines(text);
  ASSERT_GT(out.size(), 58u);
  EXPECT_NE(out[0].find("loop trace of func_M"), std::string::npos) << out[0];
  EXPECT_NE(out[1].find("instruction at"), std::string::npos) << out[1];
  // Row 1 is func_M's first call, row 2 func_A's first add, called from it.
  EXPECT_NE(out[2].find("func_M:0"), std::string::npos) << out[2];
  EXPECT_NE(out[2].find("call rax"), std::string::npos) << out[2];
  EXPECT_NE(out[3].find("func_A:0"), std::string::npos) << out[3];
  EXPECT_NE(out[3].find("0x3000"), std::string::npos) << out[3];
  EXPECT_NE(out[3].find("add rax, rdi"), std::string::npos) << out[3];
  EXPECT_NE(out[57].find("func_M:5"), std::string::npos) << out[57];
  EXPECT_NE(out[57].find("ret"), std::string::npos) << out[57];
  EXPECT_NE(text.find("accuracy: 100.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("coverage: 100.0% of the loop's 6 instructions"), std::string::npos);
  EXPECT_NE(text.find("contradicting partial sequences: 0 of"), std::string::npos);
  EXPECT_EQ(text.find("LOW CONFIDENCE"), std::string::npos);
}

TEST(LoopReport, FilledInstructionsAndTheCostAreShown) {
  // 20 samples on 20 distinct instructions, at least one under each call site (the calls go
  // through a register); the entry is never sampled. The rest is filled in from the code.
  Capture capture = sampledCapture(std::vector<std::vector<uint64_t>>(40, kSpecCallees), 130, 27);
  capture.stops = 20;
  capture.durationNs = 2'000'000'000;
  capture.header.periodNs = 100'000'000;
  capture.loop->threadCpuNs = 1'900'000'000;
  std::string text =
      renderLoop(capture, rebuildLoop(capture, {LoopMode::Time, true}, nullptr), false);
  std::vector<std::string> out = lines(text);
  ASSERT_GT(out.size(), 57u);
  EXPECT_NE(out[2].find("func_M:0"), std::string::npos) << out[2];
  EXPECT_NE(out[2].find(" - "), std::string::npos) << out[2]; // filled: no sample
  // Sampled: 17 distinct instructions (the first and last iterations are dropped: either may be
  // cut short).
  EXPECT_NE(text.find("path: 56 instructions, 39 of them never sampled"), std::string::npos)
      << text;
  EXPECT_NE(text.find(" samples are few"), std::string::npos) << text;
  EXPECT_NE(text.find("stops: 20 to sample (10 Hz), 40 at the marker, in 2.00 s; the loop's "
                      "thread ran 95.0% of that time: a CPU-bound loop ran 5.0% slower"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("traps at the marker are not held"), std::string::npos) << text;
}

TEST(LoopReport, AMarkerThatCostMoreThanTheTargetSaysSo) {
  Capture capture = sampledCapture(std::vector<std::vector<uint64_t>>(40, kSpecCallees), 130, 27);
  capture.durationNs = 2'000'000'000;
  capture.loop->threadCpuNs = 1'500'000'000;
  std::string text =
      renderLoop(capture, rebuildLoop(capture, {LoopMode::Time, true}, nullptr), false);
  EXPECT_NE(text.find("a CPU-bound loop ran 25.0% slower"), std::string::npos) << text;
  EXPECT_NE(text.find("note: the 40 traps at the marker are not held to --overhead"),
            std::string::npos)
      << text;
}

TEST(LoopReport, TimeModeShowsWeights) {
  Capture capture = sampledCapture(std::vector<std::vector<uint64_t>>(70, kSpecCallees), 7);
  std::string text =
      renderLoop(capture, rebuildLoop(capture, {LoopMode::Time, true}, nullptr), false);
  EXPECT_NE(text.find("samples"), std::string::npos);
  EXPECT_NE(text.find("%"), std::string::npos);
  EXPECT_NE(text.find("mode: time"), std::string::npos);
}

TEST(LoopReport, VaryingPathWarnsOfLowConfidence) {
  std::vector<std::vector<uint64_t>> iterations;
  for (int i = 0; i < 80; ++i)
    iterations.push_back(i % 2 ? kSpecCallees
                               : std::vector<uint64_t>{kFuncC, kFuncC, kFuncA, kFuncA, kFuncB});
  Capture capture = sampledCapture(iterations, 7);
  std::string text =
      renderLoop(capture, rebuildLoop(capture, {LoopMode::Time, true}, nullptr), false);
  EXPECT_NE(text.find("LOW CONFIDENCE"), std::string::npos) << text;
  EXPECT_NE(text.find("  e.g. func_"), std::string::npos) << text;
}

TEST(LoopReport, LowConfidenceNeedsContradictionsBeyondTheToleranceAndMoreThanOne) {
  LoopRebuild rebuilt;
  rebuilt.trace.diagnostics.iterations = 12;
  rebuilt.trace.diagnostics.contradictions = {{{3}, 1}};
  EXPECT_FALSE(lowConfidence(rebuilt)) << "one stray sample of 12";
  rebuilt.trace.diagnostics.contradictions.push_back({{5}, 1});
  EXPECT_TRUE(lowConfidence(rebuilt)) << "2 of 12";
  rebuilt.trace.diagnostics.iterations = 40;
  EXPECT_FALSE(lowConfidence(rebuilt)) << "2 of 40: within 5 %";
  rebuilt.trace.diagnostics.contradictions.push_back({{7, 9}, 2});
  EXPECT_TRUE(lowConfidence(rebuilt)) << "4 of 40";
}

TEST(LoopReport, JsonCarriesRowsAndSummary) {
  Capture capture = sampledCapture(std::vector<std::vector<uint64_t>>(70, kSpecCallees), 7);
  StepTrace truth = steppedIteration(kSpecCallees);
  std::string json =
      renderLoop(capture, rebuildLoop(capture, {LoopMode::Count, true}, &truth), true);
  EXPECT_EQ(json.front(), '{');
  EXPECT_NE(json.find("\"element\":\"func_A:0\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"context\":\"func_M:0\""), std::string::npos);
  EXPECT_NE(json.find("\"accuracy\":1"), std::string::npos);
  EXPECT_NE(json.find("\"lowConfidence\":false"), std::string::npos);
  EXPECT_NE(json.find("\"split\":\"marker\""), std::string::npos);
}

TEST(LoopReport, CallsIntoCodeTheCaptureLacksAreNamed) {
  Capture capture = sampledCapture(std::vector<std::vector<uint64_t>>(40, kSpecCallees), 130, 27);
  capture.code.erase(kFuncC);
  const LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Time, true}, nullptr);
  const std::string text = renderLoop(capture, rebuilt, false);
  EXPECT_NE(text.find("note: the path leaves out the code reached from 1 instruction (func_M:4 at "
                      "0x2008): calls into code the capture lacks, or indirect jumps in callees "
                      "(taken for tail calls back to the caller)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(renderLoop(capture, rebuilt, true).find("\"steppedOverCalls\":[\"0x2008\"]"),
            std::string::npos);
}

TEST(LoopReport, SaysWhenNoIterationWasSampled) {
  Capture capture = emptyCapture();
  std::string text = renderLoop(capture, rebuildLoop(capture, {}, nullptr), false);
  EXPECT_NE(text.find("no complete iteration was sampled"), std::string::npos) << text;
}

} // namespace
} // namespace strobe
