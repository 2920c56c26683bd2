#include "report/TenetText.h"

#include <fmt/format.h>

namespace strobe {
namespace {

// The registers Tenet knows: general-purpose ones, the stack pointer and the pc (not flags,
// segment bases or orig_rax, which its parser would reject).
size_t tenetRegisterCount(Isa isa) {
  return isa == Isa::X86_64 ? 17 : 33; // rax..r15, rip / x0..x30, sp, pc
}

void appendAccess(const char *kind, uint64_t address, const std::vector<uint8_t> &value,
                  std::string &out) {
  fmt::format_to(std::back_inserter(out), ",{}=0x{:x}:", kind, address);
  for (uint8_t byte : value)
    fmt::format_to(std::back_inserter(out), "{:02x}", byte);
}

} // namespace

TenetWriter::TenetWriter(Isa isa, std::string &out)
    : table_(registerTable(isa)),
      tenetCount_(std::min(tenetRegisterCount(isa), table_.regs.size())), out_(out) {}

void TenetWriter::add(const TraceRecord &record) {
  if (havePending_)
    writePending(record.gap ? nullptr : &record);
  pending_ = record;
  havePending_ = true;
}

void TenetWriter::finish() {
  if (havePending_)
    writePending(nullptr);
  havePending_ = false;
  previousRegs_.clear();
}

void TenetWriter::writePending(const TraceRecord *next) {
  const std::vector<uint64_t> &regs = pending_.regs;
  const bool full = previousRegs_.empty() || pending_.gap || previousRegs_.size() != regs.size();
  const size_t lineStart = out_.size();
  for (size_t r = 0; r < tenetCount_ && r < regs.size(); ++r)
    if (full || r == table_.pc || regs[r] != previousRegs_[r])
      fmt::format_to(std::back_inserter(out_), "{}{}=0x{:x}", out_.size() > lineStart ? "," : "",
                     table_.regs[r], regs[r]);
  // The memory of the instruction this line's pc starts, which the next record holds.
  if (next)
    for (const MemoryAccess &a : next->memory) {
      if (a.read)
        appendAccess("mr", a.address, a.readValue, out_);
      if (a.write)
        appendAccess("mw", a.address, a.writtenValue, out_);
    }
  out_ += '\n';
  previousRegs_ = regs;
}

void appendTenet(Isa isa, std::span<const TraceRecord> records, std::string &out) {
  TenetWriter writer(isa, out);
  for (const TraceRecord &record : records)
    writer.add(record);
  writer.finish();
}

} // namespace strobe
