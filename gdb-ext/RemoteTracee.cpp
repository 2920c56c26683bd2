#include "RemoteTracee.h"

#include "target/GdbSignals.h"

#include <cstring>
#include <fmt/format.h>
#include <utility>

namespace strobe::gdb {
namespace {

constexpr size_t kMaxInstruction = 16;
constexpr int kProtocolTrap = 5; // SIGTRAP in the protocol's numbering: the step's own stop

} // namespace

RemoteTracee::RemoteTracee(Isa isa, Layout layout, Exchange exchange)
    : isa_(isa), layout_(std::move(layout)), exchange_(std::move(exchange)), nextPc_(isa) {}

std::string RemoteTracee::threadId(uint64_t tid) const {
  return fmt::format("{}{:x}", layout_.threadPrefix, tid);
}

bool RemoteTracee::fetch(uint64_t tid, bool select) {
  readTid_ = 0;
  if (select) {
    std::optional<std::string> selected = exchange_("Hg" + threadId(tid));
    if (!selected || *selected != "OK")
      return false;
  }
  std::optional<std::string> block = exchange_("g");
  if (!block)
    return false;
  block_ = std::move(*block);
  regs_.resize(layout_.regs.size());
  for (size_t i = 0; i < layout_.regs.size(); ++i)
    if (!readRegisterWords(block_, layout_.regs[i], 1, &regs_[i]))
      return false;
  readTid_ = tid;
  return true;
}

bool RemoteTracee::read(uint64_t address, void *out, size_t size) {
  std::optional<std::string> reply = exchange_(fmt::format("m{:x},{:x}", address, size));
  std::optional<std::vector<uint8_t>> bytes = reply ? decodeHexBytes(*reply) : std::nullopt;
  if (!bytes || bytes->size() != size)
    return false;
  std::memcpy(out, bytes->data(), size);
  return true;
}

bool RemoteTracee::readThread(uint64_t tid, unsigned depth, ThreadSnapshot &out) {
  if (tid == 0 || depth > 1 || (tid != readTid_ && !fetch(tid, true)))
    return false;
  out.tid = tid;
  out.regs = regs_;
  out.stack.assign(1, regs_[registerTable(isa_).pc]);
  return true;
}

bool RemoteTracee::readExtended(uint64_t tid, ExtendedSnapshot &out) {
  if (tid == 0 || (tid != readTid_ && !fetch(tid, true)))
    return false;
  const RegisterTable &table = registerTable(isa_);
  out.values.assign(table.extSlots(), 0);
  out.absent.clear();
  uint64_t *slot = out.values.data();
  for (size_t i = 0; i < table.ext.size(); ++i) {
    const unsigned words = table.ext[i].bytes / 8;
    if (!readRegisterWords(block_, layout_.extended[i], words, slot))
      return false;
    slot += words;
  }
  return true;
}

RemoteTracee::Step RemoteTracee::step(uint64_t tid, const std::unordered_set<uint64_t> &avoid,
                                      int &number) {
  if (std::exchange(interrupted_, false))
    throw Interrupted();
  if (tid != readTid_ && !fetch(tid, true))
    return Step::LeftToGdb;
  const uint64_t pc = regs_[registerTable(isa_).pc];
  // GDB steps off a breakpoint's address itself (it lifts the breakpoint for that step).
  if (avoid.count(pc))
    return Step::LeftToGdb;
  auto code = code_.find(pc);
  if (code == code_.end()) {
    std::vector<uint8_t> bytes(kMaxInstruction);
    // Near the end of a mapping only a shorter read succeeds.
    size_t size = kMaxInstruction;
    while (size > 0 && !read(pc, bytes.data(), size))
      size /= 2;
    if (size == 0)
      return Step::LeftToGdb;
    bytes.resize(size);
    code = code_.emplace(pc, std::move(bytes)).first;
  }
  auto next =
      nextPc_.candidates(code->second, pc, regs_, [this](uint64_t address, void *out, size_t size) {
        return read(address, out, size);
      });
  if (!next)
    return Step::LeftToGdb;
  for (uint64_t address : *next)
    if (avoid.count(address))
      return Step::LeftToGdb;

  std::optional<std::string> reply;
  try {
    reply = exchange_("vCont;s:" + threadId(tid));
  } catch (const Interrupted &) {
    // Ctrl-C: GDB lets a packet's reply arrive, then ends `maint packet` without it. Whether
    // the step ran is in the registers; if it did, it is recorded before the trace ends.
    const std::vector<uint64_t> before = regs_;
    const std::string beforeBlock = block_;
    if (!fetch(tid, false) || (regs_ == before && block_ == beforeBlock))
      throw;
    interrupted_ = true;
    return Step::Done;
  }
  std::optional<RemoteStop> stop = reply ? parseStopReply(*reply) : std::nullopt;
  if (!stop) // a stub without vCont, or an error: the thread did not move
    return Step::LeftToGdb;
  readTid_ = 0;
  switch (stop->kind) {
  case RemoteStop::Kind::Exited:
    number = stop->code;
    return Step::Vanished;
  case RemoteStop::Kind::Terminated:
    number = -hostSignalFromGdb(stop->signo).value_or(0);
    return Step::Vanished;
  case RemoteStop::Kind::Signal:
    break;
  }
  if (!stop->thread.empty() && stop->thread != threadId(tid))
    return Step::Unexpected;
  if (stop->signo == kProtocolTrap) {
    // The stub made the stopped thread its current one. When this fails, the next read goes
    // through GDB; Ctrl-C during it waits for the next step, this one being done.
    try {
      fetch(tid, false);
    } catch (const Interrupted &) {
      interrupted_ = true;
    }
    return Step::Done;
  }
  // A signal stops the step before the instruction runs: the registers are as they were.
  std::optional<int> host = hostSignalFromGdb(stop->signo);
  if (!host)
    return Step::Unexpected;
  number = *host;
  return Step::Signal;
}

} // namespace strobe::gdb
