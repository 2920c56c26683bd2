#include "capture/Sampler.h"

#include "isa/Disassembler.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>

namespace strobe {
namespace {

// Functions larger than this are not copied for annotation (huge generated code).
constexpr uint64_t kMaxCodeBytes = 64 * 1024;
// CPU time a thread must have used since its previous sample to count as on-CPU.
constexpr uint64_t kRanThresholdNs = 30'000;

std::string procPath(int pid, uint64_t tid, const char *file) {
  return fmt::format("/proc/{}/task/{}/{}", pid, tid, file);
}

} // namespace

Sampler::Sampler(Target &target, Capture &capture, unsigned stackDepth)
    : target_(target), capture_(capture), stackDepth_(stackDepth),
      hostProcess_(target.isHostProcess()) {}

size_t Sampler::sampleAllThreads(uint64_t timeNs) {
  const RegisterTable &table = registerTable(capture_.header.isa);
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
    if (!capture_.symbols.count(sample.stack[0]))
      pendingPcs_.insert(sample.stack[0]);
    for (size_t i = 1; i < sample.stack.size(); ++i)
      if (!capture_.symbols.count(sample.stack[i]))
        pendingReturns_.insert(sample.stack[i]);
    if (!capture_.moduleFor(sample.stack[0]))
      modulesStale_ = true;
    noteThread(tid);
    capture_.samples.push_back(std::move(sample));
    ++read;
  }
  return read;
}

bool Sampler::onCpu(uint64_t tid, bool inSyscall) {
  // Where the inferior is visible from here, schedstat's first field (ns on CPU) says exactly
  // whether the thread ran since its previous sample; elsewhere, a thread parked in a system call
  // is taken as off-CPU.
  if (!hostProcess_)
    return !inSyscall;
  std::ifstream in(procPath(capture_.header.pid, tid, "schedstat"));
  uint64_t ns = 0;
  if (!(in >> ns))
    return !inSyscall;
  auto [it, first] = cpuNs_.try_emplace(tid, ns);
  if (first)
    return !inSyscall;
  // Every stop wakes even a blocked thread for a few microseconds of kernel time (the debugger
  // stops and resumes each one), so only more than that counts as having run.
  bool ran = ns - it->second > kRanThresholdNs;
  it->second = ns;
  return ran;
}

void Sampler::noteThread(uint64_t tid) {
  auto known = std::find_if(capture_.threads.begin(), capture_.threads.end(),
                            [tid](const ThreadInfo &t) { return t.tid == tid; });
  if (known != capture_.threads.end())
    return;
  ThreadInfo info{tid, {}};
  if (hostProcess_) {
    std::ifstream in(procPath(capture_.header.pid, tid, "comm"));
    std::getline(in, info.name);
  }
  capture_.threads.push_back(std::move(info));
}

void Sampler::refreshModules() {
  // Modules that were unloaded stay in the table: their samples must still symbolize.
  for (ModuleInfo &m : target_.modules()) {
    bool known =
        std::any_of(capture_.modules.begin(), capture_.modules.end(),
                    [&](const ModuleInfo &k) { return k.path == m.path && k.start == m.start; });
    if (!known)
      capture_.modules.push_back(std::move(m));
  }
  modulesStale_ = false;
}

void Sampler::symbolizePending() {
  if (modulesStale_)
    refreshModules();
  for (uint64_t pc : pendingPcs_) {
    SymbolInfo symbol = target_.symbolize(pc);
    captureFunctionCode(symbol);
    capture_.symbols.emplace(pc, std::move(symbol));
  }
  // A return address belongs to the instruction after the call; the call itself is at - 1.
  for (uint64_t ret : pendingReturns_)
    if (!capture_.symbols.count(ret))
      capture_.symbols.emplace(ret, target_.symbolize(ret - 1));
  pendingPcs_.clear();
  pendingReturns_.clear();
}

void Sampler::captureFunctionCode(const SymbolInfo &symbol) {
  if (symbol.start == 0 || symbol.size == 0 || symbol.size > kMaxCodeBytes ||
      capture_.code.count(symbol.start))
    return;
  std::vector<uint8_t> bytes = target_.readMemory(symbol.start, symbol.size);
  if (bytes.size() != symbol.size)
    return;
  Disassembler disassembler(capture_.header.isa);
  for (uint64_t offset = 0; offset < bytes.size();) {
    uint64_t address = symbol.start + offset;
    std::optional<Instruction> insn =
        disassembler.decode(std::span<const uint8_t>(bytes).subspan(offset), address);
    if (!insn)
      break;
    if (!capture_.instructionLines.count(address)) {
      SymbolInfo line = target_.symbolize(address);
      capture_.instructionLines.emplace(address, SymbolInfo{{}, 0, 0, line.file, line.line, {}});
    }
    offset += insn->length;
  }
  capture_.code.emplace(symbol.start, std::move(bytes));
}

} // namespace strobe
