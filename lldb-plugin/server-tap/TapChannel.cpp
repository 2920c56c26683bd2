#include "TapChannel.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace strobe::lldb_plugin {
namespace {

// A shared futex (no FUTEX_PRIVATE_FLAG): the page is mapped in two processes.
uint32_t *futexWord(std::atomic<uint32_t> &word) { return reinterpret_cast<uint32_t *>(&word); }

} // namespace

void waitWhile(std::atomic<uint32_t> &word, uint32_t value, uint64_t timeoutNs) {
  timespec timeout{static_cast<time_t>(timeoutNs / 1'000'000'000),
                   static_cast<long>(timeoutNs % 1'000'000'000)};
  syscall(SYS_futex, futexWord(word), FUTEX_WAIT, value, &timeout, nullptr, 0);
}

void wakeAll(std::atomic<uint32_t> &word) {
  syscall(SYS_futex, futexWord(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

} // namespace strobe::lldb_plugin
