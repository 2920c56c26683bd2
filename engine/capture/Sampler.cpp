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
      hostProcess_(target.isHostProcess()), names_(target, capture) {}

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
    names_.noteStack(sample.stack);
    names_.noteThread(tid);
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

void Sampler::symbolizePending() {
  names_.symbolizePending([this](const SymbolInfo &symbol) { captureFunctionCode(symbol); });
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
