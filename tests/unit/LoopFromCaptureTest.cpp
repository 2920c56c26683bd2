#include "FakeTarget.h"
#include "LoopCaptureFixture.h"

#include "analysis/looptrace/EditDistance.h"
#include "analysis/looptrace/FromCapture.h"
#include "capture/FunctionCode.h"

#include <gtest/gtest.h>

namespace strobe {
namespace {

using namespace loop_fixture;

std::vector<std::vector<uint64_t>> repeated(size_t count, const std::vector<uint64_t> &callees) {
  return std::vector<std::vector<uint64_t>>(count, callees);
}

std::string nameOf(const LoopRebuild &rebuilt, const Element &element) {
  return rebuilt.functions.at(element.function).name + ":" + std::to_string(element.ordinal);
}

std::string contextOf(const LoopRebuild &rebuilt, const Element &element) {
  if (!element.context)
    return "-";
  return rebuilt.functions.at(element.context->function).name + ":" +
         std::to_string(element.context->ordinal);
}

TEST(LoopFromCapture, AnnotatesOrdinalsAndCallSites) {
  Capture capture = sampledCapture(repeated(3, kSpecCallees), 1);
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Count, true}, nullptr);
  // 59 instructions per iteration: func_M's 6, 50 in callees, 3 in main (outside the target).
  EXPECT_EQ(rebuilt.threadSamples, 3u * 59);
  EXPECT_EQ(rebuilt.outsideSamples, 3u * 3);
  EXPECT_EQ(rebuilt.droppedSamples, 56u); // the last iteration may have been cut short
  ASSERT_EQ(rebuilt.iterations.size(), 2u);
  const PartialSequence &first = rebuilt.iterations[0];
  ASSERT_EQ(first.size(), 56u);
  EXPECT_EQ(nameOf(rebuilt, first[0]), "func_M:0");
  EXPECT_EQ(contextOf(rebuilt, first[0]), "-");
  EXPECT_EQ(nameOf(rebuilt, first[1]), "func_A:0");
  EXPECT_EQ(contextOf(rebuilt, first[1]), "func_M:0");
  EXPECT_EQ(nameOf(rebuilt, first[36]), "func_B:2"); // M0 A0-9 M1 B M2 B M3 B0 B1 B2
  EXPECT_EQ(contextOf(rebuilt, first[36]), "func_M:3");
  EXPECT_EQ(first[36].pc, kFuncB + 2 * kAddLength);
  EXPECT_EQ(nameOf(rebuilt, first[55]), "func_M:5");
  EXPECT_EQ(rebuilt.loopInstructions.size(), 6u);
}

TEST(LoopFromCapture, PureAnnotationDropsTheCallSite) {
  Capture capture = sampledCapture(repeated(3, kSpecCallees), 1);
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Count, false}, nullptr);
  ASSERT_FALSE(rebuilt.iterations.empty());
  for (const Element &element : rebuilt.iterations[0])
    EXPECT_FALSE(element.context.has_value());
}

TEST(LoopFromCapture, CountModeRebuildsTheSpecExampleExactly) {
  // Every 7th instruction of 59-instruction iterations: the phase moves by 3 per iteration, so
  // 59 iterations see every instruction.
  Capture capture = sampledCapture(repeated(70, kSpecCallees), 7);
  StepTrace truth = steppedIteration(kSpecCallees);
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Count, true}, &truth);
  EXPECT_EQ(tracePcs(rebuilt.trace.trace), truePcs(kSpecCallees));
  ASSERT_TRUE(rebuilt.verification);
  EXPECT_EQ(rebuilt.verification->truth, truePcs(kSpecCallees));
  EXPECT_DOUBLE_EQ(rebuilt.verification->accuracy, 1.0);
  EXPECT_DOUBLE_EQ(rebuilt.verification->truthCoverage, 1.0);
  EXPECT_DOUBLE_EQ(rebuilt.trace.diagnostics.coverage.value_or(0), 1.0);
  EXPECT_TRUE(rebuilt.trace.diagnostics.contradictions.empty());
}

TEST(LoopFromCapture, OneSamplePerIterationIsOrderedByTheCode) {
  // Iterations far shorter than the period: 61 instructions apart, one sample per iteration.
  Capture capture = sampledCapture(repeated(400, kSpecCallees), 61);
  capture.loop->split = LoopSplit::PerSample;
  StepTrace truth = steppedIteration(kSpecCallees);
  LoopRebuild context = rebuildLoop(capture, {LoopMode::Count, true}, &truth);
  LoopRebuild pure = rebuildLoop(capture, {LoopMode::Count, false}, &truth);
  ASSERT_TRUE(context.verification && pure.verification);
  // Singletons carry no order: the merge alone gets 0.82 of it right with the call sites and less
  // without them (the three func_B calls are then one function). The walk through the code, part
  // of the context annotation, orders them exactly; the pure form is the merge alone.
  std::vector<uint64_t> pcs = truePcs(kSpecCallees);
  double mergedContext = traceAccuracy(tracePcs(context.trace.trace), pcs);
  double mergedPure = traceAccuracy(tracePcs(pure.trace.trace), pcs);
  EXPECT_GE(mergedContext, 0.8);
  EXPECT_GT(mergedContext, mergedPure + 0.1);
  EXPECT_DOUBLE_EQ(context.verification->mergedAccuracy, mergedContext);
  EXPECT_DOUBLE_EQ(context.verification->accuracy, 1.0);
  EXPECT_DOUBLE_EQ(pure.verification->accuracy, mergedPure);
  EXPECT_FALSE(pure.walked);
  EXPECT_TRUE(context.walked);
  EXPECT_TRUE(context.pathComplete);
  EXPECT_EQ(context.offPathSamples, 0u);
}

TEST(LoopFromCapture, UnsampledInstructionsAreFilledInFromTheCode) {
  // 130 = two iterations and 12 instructions: the 20 samples fall on 20 distinct instructions of
  // the 56, at least one under each call site (func_M calls through a register: which function
  // a call site runs is known from the samples under it). The entry (phase 0) is never sampled.
  Capture capture = sampledCapture(repeated(40, kSpecCallees), 130, 27);
  StepTrace truth = steppedIteration(kSpecCallees);
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Time, true}, &truth);
  ASSERT_TRUE(rebuilt.verification);
  EXPECT_DOUBLE_EQ(rebuilt.verification->accuracy, 1.0);
  ASSERT_EQ(rebuilt.path.size(), 56u); // func_M's 6 and the callees' 50
  size_t sampled = 0;
  for (const LoopStep &step : rebuilt.path) {
    sampled += !step.filled;
    EXPECT_EQ(step.samples, step.filled ? 0u : 1u) << std::hex << step.element.pc;
  }
  EXPECT_EQ(sampled, 17u); // positions 27 + 130k mod 59; the first and last iterations dropped
  EXPECT_EQ(rebuilt.path[0].element.pc, kFuncM);
  EXPECT_TRUE(rebuilt.path[0].filled);
  EXPECT_TRUE(rebuilt.pathComplete);
}

// A call into code the capture lacks is stepped over, and the rebuild names it: the path is
// short of its callee's instructions (here func_C's ten, of the 56), or of a library's behind a
// PLT stub.
TEST(LoopFromCapture, CallsIntoCodeTheCaptureLacksAreNamed) {
  Capture capture = sampledCapture(repeated(40, kSpecCallees), 130, 27);
  LoopRebuild whole = rebuildLoop(capture, {LoopMode::Time, true}, nullptr);
  EXPECT_TRUE(whole.steppedOverCalls.empty());
  capture.code.erase(kFuncC);
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Time, true}, nullptr);
  EXPECT_EQ(rebuilt.steppedOverCalls, (std::vector<uint64_t>{kFuncM + 4 * kCallLength}));
  EXPECT_LT(rebuilt.path.size(), whole.path.size());

  // func_C starting as a PLT stub does: a jump through a register, which the walk takes back to
  // func_M as a tail call.
  capture.code[kFuncC] = calleeBytes();
  capture.code[kFuncC].insert(capture.code[kFuncC].begin(), {0xff, 0xe0}); // jmp rax
  rebuilt = rebuildLoop(capture, {LoopMode::Time, true}, nullptr);
  EXPECT_EQ(rebuilt.steppedOverCalls, (std::vector<uint64_t>{kFuncC}));
}

// func_M calling func_A through a PLT stub: `call stub; ret`, and the stub's `jmp [rip + 0x10]`,
// whose target is in data. The samples under the call ran in func_A: the walk follows the stub's
// jump there, as a tail call, and back to func_M at func_A's ret.
TEST(LoopFromCapture, APltStubsJumpGoesWhereTheSamplesUnderTheCallRan) {
  constexpr uint64_t kStub = 0x3800, kReturn = kFuncM + 5, kMainReturn = kMain + 5;
  Capture capture = emptyCapture();
  capture.code[kFuncM] = {0xe8, 0xfb, 0x17, 0x00, 0x00, 0xc3}; // call 0x3800; ret
  capture.code[kStub] = {0xff, 0x25, 0x10, 0x00, 0x00, 0x00};
  capture.symbols[kStub] = {"func_A@plt", kStub, 6, "", 0, {}};
  std::vector<Step> iteration{{kFuncM, {kMainReturn}, kStack},
                              {kStub, {kReturn, kMainReturn}, kStack - 8}};
  for (unsigned i = 0; i < 10; ++i)
    iteration.push_back({kFuncA + i * kAddLength, {kReturn, kMainReturn}, kStack - 8});
  iteration.push_back({kReturn, {kMainReturn}, kStack});
  for (unsigned i = 0; i < 3; ++i)
    iteration.push_back({kMainReturn + i, {}, kStack + 8});
  capture = sampledSteps(std::move(capture), std::vector(40, iteration), 7, 3);
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Time, true}, nullptr);
  std::vector<uint64_t> path;
  for (const LoopStep &step : rebuilt.path)
    path.push_back(step.element.pc);
  std::vector<uint64_t> expected{kFuncM, kStub};
  for (unsigned i = 0; i < 10; ++i)
    expected.push_back(kFuncA + i * kAddLength);
  expected.push_back(kReturn);
  EXPECT_EQ(path, expected);
  EXPECT_TRUE(rebuilt.pathComplete);
  EXPECT_TRUE(rebuilt.steppedOverCalls.empty());
  EXPECT_EQ(rebuilt.offPathSamples, 0u);
}

TEST(LoopFromCapture, ExpressionSplitUsesTheValues) {
  Capture capture = sampledCapture(repeated(4, kSpecCallees), 1);
  capture.loop->split = LoopSplit::Expression;
  capture.loop->markerHits.clear();
  for (size_t i = 0; i < capture.samples.size(); ++i)
    capture.loop->expressionValues[i] = capture.samples[i].timeNs / 59;
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Count, true}, nullptr);
  // The first and the last run are dropped: either may be cut short.
  ASSERT_EQ(rebuilt.iterations.size(), 2u);
  EXPECT_EQ(rebuilt.iterations[0].size(), 56u);
}

TEST(LoopFromCapture, IgnoresOtherThreads) {
  Capture capture = sampledCapture(repeated(3, kSpecCallees), 1);
  Sample other = capture.samples[5];
  other.tid = 8;
  capture.samples.insert(capture.samples.begin() + 6, other);
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Count, true}, nullptr);
  EXPECT_EQ(rebuilt.threadSamples, 3u * 59);
  EXPECT_EQ(rebuilt.iterations[0].size(), 56u);
}

// Both paths fit into one longer merged trace; the walk through the code takes one of them, and
// the samples of the other fall off it.
TEST(LoopFromCapture, VaryingPathIsReportedAsContradicting) {
  std::vector<std::vector<uint64_t>> iterations;
  for (int i = 0; i < 80; ++i)
    iterations.push_back(i % 2 ? kSpecCallees
                               : std::vector<uint64_t>{kFuncC, kFuncC, kFuncA, kFuncA, kFuncB});
  Capture capture = sampledCapture(iterations, 7);
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Time, true}, nullptr);
  EXPECT_FALSE(rebuilt.trace.diagnostics.contradictions.empty());
  EXPECT_GT(rebuilt.offPathSamples, 0u);
}

TEST(LoopFromCapture, CountSplitTakesEveryTSamples) {
  Capture capture = sampledCapture(repeated(2, kSpecCallees), 1);
  capture.loop->split = LoopSplit::Count;
  capture.loop->countT = 8;
  LoopRebuild rebuilt = rebuildLoop(capture, {LoopMode::Count, true}, nullptr);
  // 112 samples in the target, 8 per partial sequence.
  ASSERT_EQ(rebuilt.iterations.size(), 14u);
  EXPECT_EQ(rebuilt.iterations[0].size(), 8u);
}

TEST(LoopFromCapture, NoCaptureOfALoopIsAnError) {
  Capture capture = emptyCapture();
  capture.loop.reset();
  EXPECT_THROW(rebuildLoop(capture, {}, nullptr), LoopTraceError);
  Capture uncoded = emptyCapture();
  uncoded.code.erase(kFuncM);
  EXPECT_THROW(rebuildLoop(uncoded, {}, nullptr), LoopTraceError);
}

TEST(LoopFromCapture, HottestLoopHeadFindsTheLoopHoldingTheSamples) {
  Capture capture = emptyCapture();
  EXPECT_FALSE(hottestLoopHead(capture).has_value()); // func_M and its callees have no loop
  // 0x5000: add rax, rdi; dec rcx; jnz 0x5000; ret
  capture.code[0x5000] = {0x48, 0x01, 0xf8, 0x48, 0xff, 0xc9, 0x75, 0xf8, 0xc3};
  for (uint64_t pc : {0x5000, 0x5003, 0x5006, 0x5003}) {
    Sample sample;
    sample.tid = 7;
    sample.stack = {pc};
    capture.samples.push_back(sample);
  }
  EXPECT_EQ(hottestLoopHead(capture), std::optional<uint64_t>(0x5000));
}

TEST(LoopFromCapture, HottestLoopHeadFindsACallersLoopOnceTheCallersCodeIsCopied) {
  // The samples all stop in a leaf called from a loop; the sampler copied only the leaf.
  // 0x5000: call 0x6000; dec rcx; jnz 0x5000; ret      0x6000: add rax, rdi; ret
  const std::vector<uint8_t> caller = {0xe8, 0xfb, 0x0f, 0x00, 0x00, 0x48,
                                       0xff, 0xc9, 0x75, 0xf6, 0xc3};
  const std::vector<uint8_t> leaf = {0x48, 0x01, 0xf8, 0xc3};
  Capture capture;
  capture.header.isa = Isa::X86_64;
  capture.code[0x6000] = leaf;
  const SymbolInfo leafSymbol{"leaf", 0x6000, leaf.size(), "", 0, {}};
  const SymbolInfo callerSymbol{"caller", 0x5000, caller.size(), "", 0, {}};
  capture.symbols = {{0x6000, leafSymbol}, {0x6003, leafSymbol}, {0x5005, callerSymbol}};
  for (uint64_t pc : {0x6000, 0x6003, 0x6000}) {
    Sample sample;
    sample.tid = 7;
    sample.stack = {pc, 0x5005};
    capture.samples.push_back(sample);
  }
  EXPECT_FALSE(hottestLoopHead(capture).has_value());

  testing::FakeTarget target;
  target.memory = {{0x5000, caller}, {0x6000, leaf}};
  captureCallersCode(target, capture);
  EXPECT_EQ(capture.code.at(0x5000), caller);
  EXPECT_EQ(capture.code.at(0x6000), leaf);
  EXPECT_EQ(hottestLoopHead(capture), std::optional<uint64_t>(0x5000));
}

} // namespace
} // namespace strobe
