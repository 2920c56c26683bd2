#include "capture/Sampler.h"

#include "capture/FunctionCode.h"
#include "capture/ThreadCpu.h"

#include <algorithm>
#include <fmt/format.h>

namespace strobe {
namespace {

// CPU time a thread must have used since its previous sample to count as on-CPU.
constexpr uint64_t kRanThresholdNs = 30'000;
// A thread sampled inside a system call must have used at least 1/kInSyscallRanShare of the time
// since its previous sample: every stop charges even a thread that never woke 10-50 us of kernel
// time (the debugger stops it, resumes it, and its call restarts), more on a busy machine; and
// what a thread that slept most of that time ran before it went to sleep did not run where it
// sleeps.
constexpr uint64_t kInSyscallRanShare = 10;

} // namespace

Sampler::Sampler(Target &target, Capture &capture, unsigned stackDepth)
    : target_(target), capture_(capture), stackDepth_(stackDepth),
      hostProcess_(target.isHostProcess()), names_(target, capture),
      schedstats_(capture.header.pid, "schedstat") {}

size_t Sampler::sampleAllThreads(uint64_t timeNs) {
  size_t read = 0;
  std::vector<uint64_t> tids = target_.threads();
  for (uint64_t tid : tids)
    read += sampleThread(tid, timeNs);
  retain(tids);
  return read;
}

bool Sampler::sampleThread(uint64_t tid, uint64_t timeNs) {
  const RegisterTable &table = registerTable(capture_.header.isa);
  if (!target_.readThread(tid, stackDepth_, snapshot_) || snapshot_.stack.empty())
    return false;
  Sample sample;
  sample.timeNs = timeNs;
  sample.tid = tid;
  snapshot_.regs.resize(table.regs.size());
  if (table.syscallNr)
    sample.inSyscall = static_cast<int64_t>(snapshot_.regs[*table.syscallNr]) >= 0;
  sample.onCpu = onCpu(tid, timeNs, sample.inSyscall);
  sample.stack = snapshot_.stack;
  sample.regs = snapshot_.regs;
  names_.noteStack(sample.stack);
  names_.noteThread(tid);
  capture_.samples.push_back(std::move(sample));
  return true;
}

void Sampler::retainListedThreads() { retain(target_.threads()); }

void Sampler::retain(std::span<const uint64_t> tids) {
  schedstats_.retain(tids);
  eraseUnlisted(previous_, tids);
}

bool Sampler::onCpu(uint64_t tid, uint64_t timeNs, bool inSyscall) {
  // Where the inferior is visible from here, schedstat's first field (ns on CPU) says exactly
  // how long the thread ran since its previous sample; elsewhere, a thread parked in a system
  // call is taken as off-CPU.
  if (!hostProcess_)
    return !inSyscall;
  std::optional<uint64_t> ns = schedstatCpuNs(schedstats_.read(tid));
  if (!ns) {
    // Gone: its tid may come to name a thread begun since, which starts afresh.
    previous_.erase(tid);
    return !inSyscall;
  }
  auto [last, first] = previous_.try_emplace(tid, PreviousSample{*ns, timeNs});
  if (first)
    return !inSyscall;
  // Every stop charges even a blocked thread some kernel time (the debugger stops and resumes
  // each one), so only more than that counts as having run.
  uint64_t threshold = kRanThresholdNs;
  if (inSyscall)
    threshold = std::max(threshold, (timeNs - last->second.timeNs) / kInSyscallRanShare);
  bool ran = *ns - last->second.cpuNs > threshold;
  last->second = {*ns, timeNs};
  return ran;
}

void Sampler::symbolizePending() {
  names_.symbolizePending(
      [this](const SymbolInfo &symbol) { captureFunctionCode(target_, capture_, symbol); });
}

} // namespace strobe
