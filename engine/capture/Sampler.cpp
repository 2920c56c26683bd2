#include "capture/Sampler.h"

#include "capture/FunctionCode.h"
#include "capture/ThreadCpu.h"

#include <algorithm>
#include <fmt/format.h>

namespace strobe {
namespace {

// CPU time a thread must have used since its previous sample to count as on-CPU.
constexpr uint64_t kRanThresholdNs = 30'000;

} // namespace

Sampler::Sampler(Target &target, Capture &capture, unsigned stackDepth)
    : target_(target), capture_(capture), stackDepth_(stackDepth),
      hostProcess_(target.isHostProcess()), names_(target, capture),
      schedstats_(capture.header.pid, "schedstat") {}

size_t Sampler::sampleAllThreads(uint64_t timeNs) {
  const RegisterTable &table = registerTable(capture_.header.isa);
  size_t read = 0;
  std::vector<uint64_t> tids = target_.threads();
  for (uint64_t tid : tids) {
    if (!target_.readThread(tid, stackDepth_, snapshot_) || snapshot_.stack.empty())
      continue;
    Sample sample;
    sample.timeNs = timeNs;
    sample.tid = tid;
    snapshot_.regs.resize(table.regs.size());
    if (table.syscallNr)
      sample.inSyscall = static_cast<int64_t>(snapshot_.regs[*table.syscallNr]) >= 0;
    sample.onCpu = onCpu(tid, sample.inSyscall);
    sample.stack = snapshot_.stack;
    sample.regs = snapshot_.regs;
    names_.noteStack(sample.stack);
    names_.noteThread(tid);
    capture_.samples.push_back(std::move(sample));
    ++read;
  }
  schedstats_.retain(tids);
  eraseUnlisted(lastCpuNs_, tids);
  return read;
}

bool Sampler::onCpu(uint64_t tid, bool inSyscall) {
  // Where the inferior is visible from here, schedstat's first field (ns on CPU) says exactly
  // whether the thread ran since its previous sample; elsewhere, a thread parked in a system call
  // is taken as off-CPU.
  if (!hostProcess_)
    return !inSyscall;
  std::optional<uint64_t> ns = schedstatCpuNs(schedstats_.read(tid));
  if (!ns) {
    // Gone: its tid may come to name a thread begun since, which starts afresh.
    lastCpuNs_.erase(tid);
    return !inSyscall;
  }
  auto [last, first] = lastCpuNs_.try_emplace(tid, *ns);
  if (first)
    return !inSyscall;
  // Every stop wakes even a blocked thread for a few microseconds of kernel time (the debugger
  // stops and resumes each one), so only more than that counts as having run.
  bool ran = *ns - last->second > kRanThresholdNs;
  last->second = *ns;
  return ran;
}

void Sampler::symbolizePending() {
  names_.symbolizePending(
      [this](const SymbolInfo &symbol) { captureFunctionCode(target_, capture_, symbol); });
}

} // namespace strobe
