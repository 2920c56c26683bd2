// Heap events and loop captures survive a save and a load field for field, so strobe-report's
// 'mem table' and 'loop' see what the debugger saw.
#include "io/TraceFile.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace strobe;

namespace {

std::string tempTrace(const char *name) {
  return (std::filesystem::temp_directory_path() /
          (std::string(name) + "-" + std::to_string(getpid()) + ".strobe"))
      .string();
}

Capture captureWithEvents() {
  Capture c;
  c.header.program = "/bin/app";
  c.modules.push_back({"/bin/app", "", 0x400000, 0x500000, 0});
  c.allocEvents.push_back(
      {10, 7, AllocFunction::Malloc, EventPart::Whole, 0x1000, 100, 0, 0, {0x7000, 0x401234}});
  c.allocEvents.push_back({25,
                           8,
                           AllocFunction::Realloc,
                           EventPart::ReleasePart,
                           0,
                           0,
                           0x1000,
                           0,
                           {0x7100, 0x401300, 0x401400}});
  c.allocEvents.push_back(
      {30, 8, AllocFunction::Munmap, EventPart::Whole, 0, 0, 0x20000, 8192, {0x7200}});
  LoopCaptureInfo loop;
  loop.location = "walk.c:12";
  loop.functionStart = 0x401000;
  loop.head = 0x401020;
  loop.tid = 7;
  loop.split = LoopSplit::Expression;
  loop.expression = "iteration";
  loop.markerHits = {{7, 100}, {7, 250}};
  loop.expressionValues = {{0, 41}, {3, 42}};
  c.loop = loop;
  return c;
}

} // namespace

TEST(TraceFileEvents, HeapEventsAndTheLoopCaptureRoundTrip) {
  const std::string path = tempTrace("events");
  Capture saved = captureWithEvents();
  saveCapture(path, saved);
  LoadedTrace loaded = loadCapture(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(loaded.warnings.empty());
  const Capture &c = loaded.capture;
  ASSERT_EQ(c.allocEvents.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const AllocEvent &a = saved.allocEvents[i], &b = c.allocEvents[i];
    EXPECT_EQ(b.timeNs, a.timeNs);
    EXPECT_EQ(b.tid, a.tid);
    EXPECT_EQ(b.function, a.function);
    EXPECT_EQ(b.part, a.part);
    EXPECT_EQ(b.pointer, a.pointer);
    EXPECT_EQ(b.size, a.size);
    EXPECT_EQ(b.previous, a.previous);
    EXPECT_EQ(b.previousSize, a.previousSize);
    EXPECT_EQ(b.stack, a.stack);
  }
  ASSERT_TRUE(c.loop);
  EXPECT_EQ(c.loop->location, "walk.c:12");
  EXPECT_EQ(c.loop->functionStart, 0x401000u);
  EXPECT_EQ(c.loop->head, 0x401020u);
  EXPECT_FALSE(c.loop->wholeFunction);
  EXPECT_EQ(c.loop->tid, 7u);
  EXPECT_EQ(c.loop->split, LoopSplit::Expression);
  EXPECT_EQ(c.loop->expression, "iteration");
  ASSERT_EQ(c.loop->markerHits.size(), 2u);
  EXPECT_EQ(c.loop->markerHits[1].timeNs, 250u);
  EXPECT_EQ(c.loop->expressionValues, (std::map<size_t, uint64_t>{{0, 41}, {3, 42}}));
}

TEST(TraceFileEvents, ManyEventsSpanSeveralChunksInOrder) {
  const std::string path = tempTrace("many-events");
  Capture saved;
  for (uint64_t i = 0; i < 10000; ++i)
    saved.allocEvents.push_back(
        {i, 1, AllocFunction::Free, EventPart::Whole, 0, 0, 0x1000 + i, 0, {0x7000 + i}});
  saveCapture(path, saved);
  LoadedTrace loaded = loadCapture(path);
  std::filesystem::remove(path);
  ASSERT_EQ(loaded.capture.allocEvents.size(), 10000u);
  EXPECT_EQ(loaded.capture.allocEvents[9999].previous, 0x1000u + 9999);
  EXPECT_EQ(loaded.capture.allocEvents[4096].stack[0], 0x7000u + 4096);
}
