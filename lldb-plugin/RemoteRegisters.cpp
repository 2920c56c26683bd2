#include "RemoteRegisters.h"

#include <lldb/API/SBCommandInterpreter.h>
#include <lldb/API/SBCommandReturnObject.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace strobe::lldb_plugin {
namespace {

// lldb-server numbers at most a few hundred registers; the general-purpose ones come first.
constexpr unsigned kMaxRegisterNumber = 512;

std::optional<unsigned> number(std::string_view text, int base) {
  unsigned value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    return std::nullopt;
  return value;
}

// A register value as the protocol sends it: its bytes in target (little-endian) order, in hex.
std::optional<uint64_t> littleEndianHex(std::string_view text) {
  if (text.empty() || text.size() % 2 != 0 || text.size() > 16)
    return std::nullopt;
  uint64_t value = 0;
  for (size_t byte = 0; byte < text.size() / 2; ++byte) {
    auto digits = hexNumber(text.substr(byte * 2, 2));
    if (!digits)
      return std::nullopt;
    value |= static_cast<uint64_t>(*digits) << (8 * byte);
  }
  return value;
}

// Calls `visit(key, value)` for each "key:value;" field of a reply.
template <typename Visit> void forEachField(std::string_view reply, Visit visit) {
  while (!reply.empty()) {
    size_t end = reply.find(';');
    std::string_view field = reply.substr(0, end);
    if (size_t colon = field.find(':'); colon != field.npos)
      visit(field.substr(0, colon), field.substr(colon + 1));
    if (end == reply.npos)
      break;
    reply.remove_prefix(end + 1);
  }
}

} // namespace

std::optional<unsigned> hexNumber(std::string_view text) { return number(text, 16); }

std::optional<WholeRegister> wholeRegisterOf(const ExtRegister &reg) {
  if (reg.name.starts_with("ymm") && reg.name.ends_with('h'))
    return WholeRegister{std::string(reg.name.substr(0, reg.name.size() - 1)), reg.bytes};
  return std::nullopt;
}

std::optional<std::string_view> replyField(std::string_view reply, std::string_view key) {
  std::optional<std::string_view> found;
  forEachField(reply, [&](std::string_view k, std::string_view value) {
    if (!found && k == key)
      found = value;
  });
  return found;
}

std::string RemoteRegisters::request(const std::string &packet) {
  command_ = "process plugin packet send ";
  command_ += packet;
  lldb::SBCommandReturnObject result;
  debugger_.GetCommandInterpreter().HandleCommand(command_.c_str(), result, false);
  const char *output = result.Succeeded() ? result.GetOutput() : nullptr;
  if (!output)
    return {};
  constexpr std::string_view marker = "response: ";
  const char *reply = std::strstr(output, marker.data());
  if (!reply)
    return {};
  reply += marker.size();
  return std::string(reply, std::strcspn(reply, "\r\n"));
}

std::optional<RemoteRegisters> RemoteRegisters::learn(lldb::SBDebugger debugger,
                                                      lldb::SBProcess process,
                                                      std::span<const std::string> names,
                                                      std::span<const ExtRegister> ext) {
  const char *plugin = process.GetPluginName();
  if (!plugin || std::string_view(plugin) != "gdb-remote")
    return std::nullopt;
  RemoteRegisters registers(debugger);
  registers.ext_ = ext;
  registers.extFields_.resize(ext.size());
  for (size_t i = 0; i < ext.size(); ++i) {
    registers.extFields_[i].slot = registers.extSlots_;
    registers.extSlots_ += ext[i].bytes / 8;
  }
  std::vector<bool> resolved(names.size(), false);
  size_t unresolved = names.size() + ext.size();
  for (unsigned n = 0; n < kMaxRegisterNumber && unresolved > 0; ++n) {
    char packet[32];
    std::snprintf(packet, sizeof packet, "qRegisterInfo%x", n);
    std::string reply = registers.request(packet);
    if (reply.empty() || reply[0] == 'E')
      break; // past the last register
    std::string_view name, alias;
    std::optional<unsigned> bits, offset;
    bool view = false; // a part of other registers (eax), not in the register file by itself
    forEachField(reply, [&](std::string_view key, std::string_view value) {
      if (key == "name")
        name = value;
      else if (key == "alt-name")
        alias = value;
      else if (key == "bitsize")
        bits = number(value, 10);
      else if (key == "offset")
        offset = number(value, 10);
      else if (key == "container-regs")
        view = true;
    });
    auto named = std::find_if(names.begin(), names.end(),
                              [&](const std::string &r) { return r == name || r == alias; });
    if (named != names.end() && (bits == 64u || bits == 32u) && !resolved[named - names.begin()]) {
      registers.slotOf_[n] = static_cast<unsigned>(named - names.begin());
      resolved[named - names.begin()] = true;
      --unresolved;
    }
    if (!bits || !offset || view || *bits % 8 != 0)
      continue;
    for (size_t i = 0; i < ext.size(); ++i) {
      FileField &field = registers.extFields_[i];
      if (field.known)
        continue;
      std::optional<WholeRegister> whole = wholeRegisterOf(ext[i]);
      if (ext[i].name == name && *bits / 8 <= ext[i].bytes)
        field = {*offset, *bits / 8, field.slot, true};
      else if (whole && whole->name == name && *bits / 8 == whole->offset + ext[i].bytes)
        field = {*offset + whole->offset, ext[i].bytes, field.slot, true};
      else
        continue;
      --unresolved;
      break;
    }
  }
  if (registers.slotOf_.empty())
    return std::nullopt;
  return registers;
}

bool RemoteRegisters::readExtended(uint64_t tid, ExtendedSnapshot &out) {
  if (std::none_of(extFields_.begin(), extFields_.end(),
                   [](const FileField &f) { return f.known; }))
    return false;
  char packet[48];
  std::snprintf(packet, sizeof packet, "g;thread:%llx;", static_cast<unsigned long long>(tid));
  std::string reply = request(packet);
  std::vector<uint64_t> &values = out.values;
  values.assign(extSlots_, 0);
  out.absent.clear();
  for (size_t i = 0; i < extFields_.size(); ++i) {
    const FileField &field = extFields_[i];
    // One lldb-server does not have (ymm on a CPU without AVX) reads as 0: LLDB has none either.
    if (!field.known) {
      out.absent.emplace_back(ext_[i].name);
      continue;
    }
    if ((field.offset + field.bytes) * 2 > reply.size())
      return false;
    // The image holds each register in target (little-endian) byte order, as the slots do.
    for (size_t byte = 0; byte < field.bytes; ++byte) {
      auto digits = hexNumber(std::string_view(reply).substr((field.offset + byte) * 2, 2));
      if (!digits)
        return false;
      values[field.slot + byte / 8] |= static_cast<uint64_t>(*digits) << (8 * (byte % 8));
    }
  }
  return true;
}

void RemoteRegisters::read(uint64_t tid, std::vector<uint64_t> &values, std::vector<bool> &filled) {
  char packet[48];
  std::snprintf(packet, sizeof packet, "qThreadStopInfo%llx", static_cast<unsigned long long>(tid));
  fill(request(packet), values, filled);
}

void RemoteRegisters::fill(std::string_view reply, std::vector<uint64_t> &values,
                           std::vector<bool> &filled) const {
  // "T<signal>key:value;...": a register's key is its number in hex.
  reply = reply.substr(0, reply.find('#'));
  if (reply.size() < 3 || reply[0] != 'T')
    return;
  forEachField(reply.substr(3), [&](std::string_view key, std::string_view value) {
    std::optional<unsigned> number = hexNumber(key);
    if (!number)
      return;
    auto slot = slotOf_.find(*number);
    if (slot == slotOf_.end())
      return;
    if (std::optional<uint64_t> parsed = littleEndianHex(value)) {
      values[slot->second] = *parsed;
      filled[slot->second] = true;
    }
  });
}

} // namespace strobe::lldb_plugin
