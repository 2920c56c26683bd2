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

void appendTenet(Isa isa, std::span<const TraceRecord> records, std::string &out) {
  const RegisterTable &table = registerTable(isa);
  const size_t count = std::min(tenetRegisterCount(isa), table.regs.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const TraceRecord &record = records[i];
    const bool full = i == 0 || record.gap || records[i - 1].regs.size() != record.regs.size();
    const size_t lineStart = out.size();
    for (size_t r = 0; r < count && r < record.regs.size(); ++r)
      if (full || r == table.pc || record.regs[r] != records[i - 1].regs[r])
        fmt::format_to(std::back_inserter(out), "{}{}=0x{:x}", out.size() > lineStart ? "," : "",
                       table.regs[r], record.regs[r]);
    // The memory of the instruction this line's pc starts, which the next record holds.
    if (i + 1 < records.size() && !records[i + 1].gap)
      for (const MemoryAccess &a : records[i + 1].memory) {
        if (a.read)
          appendAccess("mr", a.address, a.readValue, out);
        if (a.write)
          appendAccess("mw", a.address, a.writtenValue, out);
      }
    out += '\n';
  }
}

} // namespace strobe
