// A record's memory accesses: a vector's behaviour, with the storage of cleared accesses kept.
#include "codec/TraceRecord.h"

#include <gtest/gtest.h>

using namespace strobe;

namespace {

MemoryAccess load(uint64_t address, std::vector<uint8_t> value) {
  return {address, static_cast<uint32_t>(value.size()), true, false, std::move(value), {}};
}

TEST(AccessList, BehavesLikeAVector) {
  AccessList list = {load(0x10, {1}), load(0x20, {2, 3})};
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].address, 0x20u);
  EXPECT_EQ(list.at(0).readValue, std::vector<uint8_t>{1});
  EXPECT_THROW(list.at(2), std::out_of_range);
  list.push_back(load(0x30, {4}));
  list.emplace_back().address = 0x40;
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[3].readValue, std::vector<uint8_t>{}); // emplace_back: a blank access
  list.eraseIf([](const MemoryAccess &a) { return a.address == 0x20 || a.address == 0x40; });
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].address, 0x10u);
  EXPECT_EQ(list[1].address, 0x30u);
  list.resize(3);
  EXPECT_EQ(list[2], MemoryAccess{});
}

// clear() keeps the accesses for reuse(), and nothing of them shows: not in size, iteration,
// comparison or copies.
TEST(AccessList, ClearedAccessesKeepTheirStorageOnly) {
  AccessList list = {load(0x10, std::vector<uint8_t>(64, 7))};
  const uint8_t *storage = list[0].readValue.data();
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.begin(), list.end());
  EXPECT_EQ(list, AccessList{});
  MemoryAccess &reused = list.reuse();
  EXPECT_EQ(list.size(), 1u);
  reused.readValue.assign(8, 1);
  EXPECT_EQ(reused.readValue.data(), storage); // no allocation
  list.clear();
  const AccessList copy = list;
  EXPECT_TRUE(copy.empty());
  list.reuse() = load(0x50, {9});
  EXPECT_EQ(list, AccessList{load(0x50, {9})});
}

TEST(AccessList, AMovedFromListIsEmptyAndUsable) {
  AccessList list = {load(0x10, {1}), load(0x20, {2})};
  AccessList moved = std::move(list);
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_TRUE(list.empty()); // NOLINT(bugprone-use-after-move): the point of the test
  list.push_back(load(0x30, {3}));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].address, 0x30u);
  moved = std::move(list);
  EXPECT_EQ(moved, AccessList{load(0x30, {3})});
  EXPECT_TRUE(list.empty()); // NOLINT(bugprone-use-after-move)
  list.reuse() = load(0x40, {4});
  EXPECT_EQ(list.size(), 1u);
}

} // namespace
