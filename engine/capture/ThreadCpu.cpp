#include "capture/ThreadCpu.h"

#include "capture/ProcFile.h"

#include <charconv>
#include <fmt/format.h>

namespace strobe {

std::optional<uint64_t> schedstatCpuNs(std::string_view schedstat) {
  // "<ns on CPU> <ns waiting> <timeslices>"
  uint64_t ns = 0;
  auto [end, error] = std::from_chars(schedstat.data(), schedstat.data() + schedstat.size(), ns);
  if (error != std::errc() || end == schedstat.data())
    return std::nullopt;
  return ns;
}

std::optional<uint64_t> threadCpuNs(int pid, uint64_t tid) {
  return schedstatCpuNs(ProcFile(fmt::format("/proc/{}/task/{}/schedstat", pid, tid)).read());
}

} // namespace strobe
