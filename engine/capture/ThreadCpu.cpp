#include "capture/ThreadCpu.h"

#include <charconv>
#include <fmt/format.h>

namespace strobe {

ThreadCpuClock::ThreadCpuClock(int pid, uint64_t tid)
    : schedstat_(fmt::format("/proc/{}/task/{}/schedstat", pid, tid)) {}

std::optional<uint64_t> ThreadCpuClock::read() {
  std::string_view text = schedstat_.read(); // "<ns on CPU> <ns waiting> <timeslices>"
  uint64_t ns = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), ns);
  if (error != std::errc() || end == text.data())
    return std::nullopt;
  return ns;
}

std::optional<uint64_t> threadCpuNs(int pid, uint64_t tid) {
  return ThreadCpuClock(pid, tid).read();
}

} // namespace strobe
