#include "capture/ThreadCpu.h"

#include "capture/ProcFile.h"

#include <fmt/format.h>

namespace strobe {

std::optional<uint64_t> schedstatCpuNs(std::string_view schedstat) {
  return leadingNumber<uint64_t>(schedstat); // "<ns on CPU> <ns waiting> <timeslices>"
}

std::optional<uint64_t> threadCpuNs(int pid, uint64_t tid) {
  return schedstatCpuNs(ProcFile(fmt::format("/proc/{}/task/{}/schedstat", pid, tid)).read());
}

} // namespace strobe
