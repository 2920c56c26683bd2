#include "target/RemotePackets.h"

#include <gtest/gtest.h>

using namespace strobe;

TEST(RemotePackets, AStepsTrapGivesItsSignalAndThread) {
  // gdbserver's reply to a step, as its packet log shows it.
  auto stop = parseStopReply("T0506:0200000000000000;07:68e5ffffff7f0000;10:4c51555555550000;"
                             "thread:p3a11.3a12;core:0;");
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->kind, RemoteStop::Kind::Signal);
  EXPECT_EQ(stop->signo, 5);
  EXPECT_EQ(stop->thread, "p3a11.3a12");
}

TEST(RemotePackets, ASignalReplyWithoutFieldsHasNoThread) {
  auto stop = parseStopReply("S1e");
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->signo, 30);
  EXPECT_EQ(stop->thread, "");
}

TEST(RemotePackets, ExitAndTerminationCarryTheirNumbers) {
  auto exited = parseStopReply("W03;process:3a11");
  ASSERT_TRUE(exited);
  EXPECT_EQ(exited->kind, RemoteStop::Kind::Exited);
  EXPECT_EQ(exited->code, 3);
  auto killed = parseStopReply("X09");
  ASSERT_TRUE(killed);
  EXPECT_EQ(killed->kind, RemoteStop::Kind::Terminated);
  EXPECT_EQ(killed->signo, 9);
}

TEST(RemotePackets, ErrorsAndUnknownPacketsAreNoStop) {
  EXPECT_FALSE(parseStopReply(""));
  EXPECT_FALSE(parseStopReply("E01"));
  EXPECT_FALSE(parseStopReply("OK"));
  EXPECT_FALSE(parseStopReply("Tzz06:00"));
  EXPECT_FALSE(parseStopReply("Wxy"));
}

TEST(RemotePackets, RegistersAreLittleEndianAndZeroExtended) {
  // rip (8 bytes) at 0, eflags (4) at 8, st0 (10) at 12, as x86-64's block has them.
  const std::string block = "4c51555555550000"
                            "46020000"
                            "0000000000000080ff3f";
  uint64_t word = 0;
  ASSERT_TRUE(readRegisterWords(block, {0, 8}, 1, &word));
  EXPECT_EQ(word, 0x55555555514cu);
  ASSERT_TRUE(readRegisterWords(block, {8, 4}, 1, &word));
  EXPECT_EQ(word, 0x246u);
  uint64_t pair[2] = {1, 1};
  ASSERT_TRUE(readRegisterWords(block, {12, 10}, 2, pair));
  EXPECT_EQ(pair[0], 0x8000000000000000u);
  EXPECT_EQ(pair[1], 0x3fffu);
}

TEST(RemotePackets, AnUnavailableOrMissingRegisterIsNotRead) {
  uint64_t word = 0;
  EXPECT_FALSE(readRegisterWords("xxxxxxxxxxxxxxxx", {0, 8}, 1, &word));
  EXPECT_FALSE(readRegisterWords("4c515555", {0, 8}, 1, &word));          // block too short
  EXPECT_FALSE(readRegisterWords("4c51555555550000", {0, 16}, 1, &word)); // wider than a word
  EXPECT_FALSE(readRegisterWords("4c51555555550000", {0, 0}, 1, &word));
}

TEST(RemotePackets, MemoryRepliesDecodeOrFail) {
  EXPECT_EQ(decodeHexBytes("55c3"), (std::vector<uint8_t>{0x55, 0xc3}));
  EXPECT_FALSE(decodeHexBytes("E01"));
  EXPECT_FALSE(decodeHexBytes(""));
  EXPECT_FALSE(decodeHexBytes("5g"));
}
