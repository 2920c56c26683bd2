#include "capture/ThreadCpu.h"

#include <fmt/format.h>
#include <fstream>

namespace strobe {

std::optional<uint64_t> threadCpuNs(int pid, uint64_t tid) {
  std::ifstream in(fmt::format("/proc/{}/task/{}/schedstat", pid, tid));
  uint64_t ns = 0;
  if (!(in >> ns))
    return std::nullopt;
  return ns;
}

} // namespace strobe
