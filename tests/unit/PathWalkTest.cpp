#include "analysis/looptrace/PathWalk.h"

#include <gtest/gtest.h>

#include <vector>

namespace strobe {
namespace {

// A loop at 0x1000 that calls g on odd rax, and g at 0x2000 (bytes assembled by hand):
//   1000 add rax, rdi   1003 test al, 1   1005 je 100c   1007 call 2000
//   100c dec rcx        100f jne 1000     1011 ret
//   2000 add rax, rdi   2003 ret
const std::vector<uint8_t> kLoop{0x48, 0x01, 0xf8, 0xa8, 0x01, 0x74, 0x05, 0xe8, 0xf4,
                                 0x0f, 0x00, 0x00, 0x48, 0xff, 0xc9, 0x75, 0xef, 0xc3};
const std::vector<uint8_t> kCallee{0x48, 0x01, 0xf8, 0xc3};
constexpr uint64_t kHead = 0x1000, kCall = 0x1007, kG = 0x2000;

class PathWalkTest : public ::testing::Test {
protected:
  InstructionDecoder decoder{Isa::X86_64};
  ControlFlowGraph loop{decoder, kLoop, kHead, "loop"};
  ControlFlowGraph callee{decoder, kCallee, kG, "g"};
  GraphLookup graphs = [this](uint64_t address) -> const ControlFlowGraph * {
    if (address >= kHead && address < kHead + kLoop.size())
      return &loop;
    if (address >= kG && address < kG + kCallee.size())
      return &callee;
    return nullptr;
  };

  PathWalkRequest loopRequest() const {
    PathWalkRequest request;
    request.start = kHead;
    request.loopAddresses = {0x1000, 0x1003, 0x1005, 0x1007, 0x100c, 0x100f};
    return request;
  }

  static std::vector<uint64_t> pcs(const WalkedPath &path) {
    std::vector<uint64_t> out;
    for (const PathPoint &step : path.steps)
      out.push_back(step.pc);
    return out;
  }
};

TEST_F(PathWalkTest, FollowsTheCallTheSampleWasUnder) {
  std::vector<PathPoint> points{{0x2003, kCall}};
  WalkedPath path = walkPath(loopRequest(), points, graphs);
  EXPECT_EQ(pcs(path), (std::vector<uint64_t>{0x1000, 0x1003, 0x1005, 0x1007, 0x2000, 0x2003,
                                              0x100c, 0x100f}));
  EXPECT_EQ(path.steps[4].callSite, std::optional<uint64_t>(kCall));
  EXPECT_FALSE(path.steps[6].callSite.has_value());
  EXPECT_TRUE(path.complete);
  EXPECT_TRUE(path.unreachedPoints.empty());
}

TEST_F(PathWalkTest, TakesTheShortestWayToTheNextSample) {
  std::vector<PathPoint> points{{0x100c, std::nullopt}};
  WalkedPath path = walkPath(loopRequest(), points, graphs);
  EXPECT_EQ(pcs(path), (std::vector<uint64_t>{0x1000, 0x1003, 0x1005, 0x100c, 0x100f}));
  EXPECT_TRUE(path.complete);
}

TEST_F(PathWalkTest, APointBehindThePathIsUnreached) {
  // One iteration never comes back to 0x1003 after 0x100c: that would be the next iteration.
  std::vector<PathPoint> points{{0x100c, std::nullopt}, {0x1003, std::nullopt}};
  WalkedPath path = walkPath(loopRequest(), points, graphs);
  EXPECT_EQ(path.unreachedPoints, std::vector<size_t>{1});
  EXPECT_EQ(pcs(path), (std::vector<uint64_t>{0x1000, 0x1003, 0x1005, 0x100c, 0x100f}));
}

TEST_F(PathWalkTest, ACallSiteThatDoesNotMatchIsNotTaken) {
  // g's instruction under another call site: the loop's call at 0x1007 does not reach it.
  std::vector<PathPoint> points{{0x2000, 0x1234}};
  WalkedPath path = walkPath(loopRequest(), points, graphs);
  EXPECT_EQ(path.unreachedPoints, std::vector<size_t>{0});
  EXPECT_TRUE(path.complete);
}

TEST_F(PathWalkTest, CodeWithoutAGraphIsSteppedOver) {
  GraphLookup loopOnly = [this](uint64_t address) -> const ControlFlowGraph * {
    return address >= kHead && address < kHead + kLoop.size() ? &loop : nullptr;
  };
  std::vector<PathPoint> points{{0x1007, std::nullopt}};
  WalkedPath path = walkPath(loopRequest(), points, loopOnly);
  EXPECT_EQ(pcs(path), (std::vector<uint64_t>{0x1000, 0x1003, 0x1005, 0x1007, 0x100c, 0x100f}));
}

TEST_F(PathWalkTest, AWholeFunctionEndsAtItsReturn) {
  PathWalkRequest request;
  request.start = kG;
  request.wholeFunction = true;
  WalkedPath path = walkPath(request, {}, graphs);
  EXPECT_EQ(pcs(path), (std::vector<uint64_t>{0x2000, 0x2003}));
  EXPECT_TRUE(path.complete);
}

TEST_F(PathWalkTest, AnIndirectCallGoesWhereTheSamplesSawIt) {
  // 0x3000 call rax; 0x3002 ret: a whole function whose call target only the samples know.
  std::vector<uint8_t> bytes{0xff, 0xd0, 0xc3};
  ControlFlowGraph caller(decoder, bytes, 0x3000, "caller");
  GraphLookup lookup = [&](uint64_t address) -> const ControlFlowGraph * {
    return address >= 0x3000 && address < 0x3003 ? &caller : graphs(address);
  };
  PathWalkRequest request;
  request.start = 0x3000;
  request.wholeFunction = true;
  request.indirectCallees[0x3000] = kG;
  WalkedPath path = walkPath(request, {}, lookup);
  EXPECT_EQ(pcs(path), (std::vector<uint64_t>{0x3000, 0x2000, 0x2003, 0x3002}));
}

// A whole function calling through a PLT stub into a library:
//   3000 call 4000   3005 ret   4000 jmp [rip + 0x10]
class PltWalkTest : public PathWalkTest {
protected:
  const std::vector<uint8_t> kCaller{0xe8, 0xfb, 0x0f, 0x00, 0x00, 0xc3};
  const std::vector<uint8_t> kStub{0xff, 0x25, 0x10, 0x00, 0x00, 0x00};
  ControlFlowGraph caller{decoder, kCaller, 0x3000, "caller"};
  ControlFlowGraph stub{decoder, kStub, 0x4000, "g@plt"};
  // The library function, when the capture has its code, is g.
  GraphLookup withStub(bool library) const {
    return [this, library](uint64_t address) -> const ControlFlowGraph * {
      if (address >= 0x3000 && address < 0x3006)
        return &caller;
      if (address >= 0x4000 && address < 0x4006)
        return &stub;
      return library ? graphs(address) : nullptr;
    };
  }
  static PathWalkRequest callerRequest() {
    PathWalkRequest request;
    request.start = 0x3000;
    request.wholeFunction = true;
    return request;
  }
};

TEST_F(PltWalkTest, AnIndirectJumpInACalleeComesBackToTheCaller) {
  WalkedPath path = walkPath(callerRequest(), {}, withStub(false));
  EXPECT_EQ(pcs(path), (std::vector<uint64_t>{0x3000, 0x4000, 0x3005}));
  EXPECT_TRUE(path.complete);
}

TEST_F(PltWalkTest, AnIndirectJumpInACalleeGoesWhereTheSamplesUnderTheCallRan) {
  // The call seen running in g: the stub's jump is a tail call into g, back at its ret.
  PathWalkRequest request = callerRequest();
  request.indirectCallees[0x3000] = kG;
  WalkedPath path = walkPath(request, {}, withStub(true));
  EXPECT_EQ(pcs(path), (std::vector<uint64_t>{0x3000, 0x4000, 0x2000, 0x2003, 0x3005}));
  EXPECT_EQ(path.steps[2].callSite, std::optional<uint64_t>(0x3000));
  EXPECT_TRUE(path.complete);
}

TEST_F(PathWalkTest, AnIndirectJumpInTheLoopItselfEndsTheWalk) {
  // 0x3000 jmp rax: a switch in the loop's own frame; where it goes only data knows.
  std::vector<uint8_t> bytes{0xff, 0xe0};
  ControlFlowGraph graph(decoder, bytes, 0x3000, "switch");
  GraphLookup lookup = [&](uint64_t address) -> const ControlFlowGraph * {
    return address >= 0x3000 && address < 0x3002 ? &graph : nullptr;
  };
  PathWalkRequest request;
  request.start = 0x3000;
  request.wholeFunction = true;
  WalkedPath path = walkPath(request, {}, lookup);
  EXPECT_FALSE(path.complete);
}

} // namespace
} // namespace strobe
