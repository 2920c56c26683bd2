// readProcessMemoryPrefix on this process's own memory: a read that runs past the last readable
// page keeps what lies before it, as both front-ends need for an instruction at a mapping's end.
#include "native/NativeStack.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>

using namespace strobe;

TEST(ProcessMemory, APrefixEndsAtTheLastReadablePage) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ASSERT_EQ(page, 4096u);
  auto *pages = static_cast<uint8_t *>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(mprotect(pages + page, page, PROT_NONE), 0);
  for (size_t i = 0; i < page; ++i)
    pages[i] = static_cast<uint8_t>(i);
  const int self = getpid();
  std::array<uint8_t, 16> out{};

  const auto start = reinterpret_cast<uint64_t>(pages);
  EXPECT_EQ(readProcessMemoryPrefix(self, start + 8, out.data(), out.size()), 16u);
  EXPECT_EQ(out[0], 8);
  EXPECT_EQ(out[15], 23);

  out.fill(0);
  EXPECT_EQ(readProcessMemoryPrefix(self, start + page - 5, out.data(), out.size()), 5u);
  EXPECT_EQ(out[0], static_cast<uint8_t>(page - 5));
  EXPECT_EQ(out[4], static_cast<uint8_t>(page - 1));

  EXPECT_EQ(readProcessMemoryPrefix(self, start + page, out.data(), out.size()), 0u);
  munmap(pages, 2 * page);
}
