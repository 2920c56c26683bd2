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
      hostProcess_(target.isHostProcess()), names_(target, capture) {}

size_t Sampler::sampleAllThreads(uint64_t timeNs) {
  const RegisterTable &table = registerTable(capture_.header.isa);
  ++stops_;
  size_t read = 0;
  for (uint64_t tid : target_.threads()) {
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
  // Threads gone since: their /proc files are closed, so a program that makes many short-lived
  // threads does not fill the debugger's file table.
  std::erase_if(cpu_, [this](const auto &entry) { return entry.second.seenAt != stops_; });
  return read;
}

bool Sampler::onCpu(uint64_t tid, bool inSyscall) {
  // Where the inferior is visible from here, schedstat's first field (ns on CPU) says exactly
  // whether the thread ran since its previous sample; elsewhere, a thread parked in a system call
  // is taken as off-CPU.
  if (!hostProcess_)
    return !inSyscall;
  auto it = cpu_.find(tid);
  std::optional<uint64_t> ns = it != cpu_.end() ? it->second.clock.read() : std::nullopt;
  if (!ns) {
    // The thread's first sample, or its tid now names a thread that began since.
    cpu_.erase(tid);
    ThreadCpuClock clock(capture_.header.pid, tid);
    if (std::optional<uint64_t> first = clock.read())
      cpu_.emplace(tid, ThreadCpuState{std::move(clock), *first, stops_});
    return !inSyscall;
  }
  // Every stop wakes even a blocked thread for a few microseconds of kernel time (the debugger
  // stops and resumes each one), so only more than that counts as having run.
  bool ran = *ns - it->second.lastNs > kRanThresholdNs;
  it->second.lastNs = *ns;
  it->second.seenAt = stops_;
  return ran;
}

void Sampler::symbolizePending() {
  names_.symbolizePending(
      [this](const SymbolInfo &symbol) { captureFunctionCode(target_, capture_, symbol); });
}

} // namespace strobe
