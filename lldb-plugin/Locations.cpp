#include "Locations.h"

#include "target/Location.h"
#include <lldb/API/SBAddress.h>
#include <lldb/API/SBBlock.h>
#include <lldb/API/SBCompileUnit.h>
#include <lldb/API/SBFileSpec.h>
#include <lldb/API/SBFunction.h>
#include <lldb/API/SBLineEntry.h>
#include <lldb/API/SBModule.h>
#include <lldb/API/SBSymbol.h>
#include <lldb/API/SBSymbolContext.h>
#include <lldb/API/SBSymbolContextList.h>
#include <lldb/API/SBValue.h>
#include <lldb/API/SBValueList.h>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace strobe::lldb_plugin {

std::string pathOf(const lldb::SBFileSpec &spec) {
  char buffer[PATH_MAX];
  return spec.IsValid() && spec.GetPath(buffer, sizeof buffer) ? buffer : std::string();
}

namespace {

// `file` as the user wrote it names `path`: the same, or its trailing components.
bool namesPath(std::string_view file, std::string_view path) {
  return path == file || (path.size() > file.size() && path.ends_with(file) &&
                          path[path.size() - file.size() - 1] == '/');
}

uint64_t loadAddress(lldb::SBAddress address, lldb::SBTarget &target) {
  return address.IsValid() ? address.GetLoadAddress(target) : LLDB_INVALID_ADDRESS;
}

// The load addresses of the symbols of `type` named exactly `name` (plain or mangled), with sizes.
std::vector<DataLocation> namedSymbols(lldb::SBTarget &target, const std::string &name,
                                       lldb::SymbolType type) {
  std::vector<DataLocation> result;
  lldb::SBSymbolContextList found = target.FindSymbols(name.c_str(), type);
  for (uint32_t i = 0; i < found.GetSize(); ++i) {
    lldb::SBSymbol symbol = found.GetContextAtIndex(i).GetSymbol();
    const char *plain = symbol.GetName();
    const char *mangled = symbol.GetMangledName();
    if (!symbol.IsValid() || !((plain && name == plain) || (mangled && name == mangled)))
      continue;
    if (uint64_t address = loadAddress(symbol.GetStartAddress(), target);
        address != LLDB_INVALID_ADDRESS)
      result.push_back({address, symbol.GetSize()});
  }
  return result;
}

std::vector<uint64_t> symbolAddresses(lldb::SBTarget &target, const std::string &name) {
  std::vector<uint64_t> result;
  for (const DataLocation &symbol : namedSymbols(target, name, lldb::eSymbolTypeCode))
    result.push_back(symbol.address);
  return result;
}

// What distinguishes one copy of a line's code from another: its function, and the inlined call
// it belongs to, if any.
std::pair<uint64_t, uint64_t> codeCopyOf(lldb::SBTarget &target, uint64_t address) {
  lldb::SBSymbolContext context = target.ResolveSymbolContextForAddress(
      target.ResolveLoadAddress(address), lldb::eSymbolContextFunction | lldb::eSymbolContextBlock);
  uint64_t function = loadAddress(context.GetFunction().GetStartAddress(), target);
  lldb::SBBlock inlined = context.GetBlock().GetContainingInlinedBlock();
  uint64_t call = inlined.IsValid() ? loadAddress(inlined.GetRangeStartAddress(0), target) : 0;
  return {function, call};
}

std::vector<uint64_t> lineAddresses(lldb::SBTarget &target, std::string_view file, uint32_t line) {
  std::string_view base = file.substr(file.rfind('/') + 1);
  lldb::SBFileSpec spec(std::string(base).c_str(), false);  // matches by file name alone
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> lowest; // per copy of the code
  for (uint32_t m = 0; m < target.GetNumModules(); ++m) {
    lldb::SBModule module = target.GetModuleAtIndex(m);
    for (uint32_t c = 0; c < module.GetNumCompileUnits(); ++c) {
      lldb::SBCompileUnit unit = module.GetCompileUnitAtIndex(c);
      for (uint32_t at = unit.FindLineEntryIndex(0, line, &spec, true); at != UINT32_MAX;
           at = unit.FindLineEntryIndex(at + 1, line, &spec, true)) {
        lldb::SBLineEntry entry = unit.GetLineEntryAtIndex(at);
        if (!namesPath(file, pathOf(entry.GetFileSpec())))
          continue;
        // A row that only continues the previous one (same line, next address) starts nothing.
        if (at > 0) {
          lldb::SBLineEntry previous = unit.GetLineEntryAtIndex(at - 1);
          if (previous.GetLine() == line && previous.GetFileSpec() == entry.GetFileSpec() &&
              previous.GetEndAddress().GetFileAddress() == entry.GetStartAddress().GetFileAddress())
            continue;
        }
        uint64_t address = loadAddress(entry.GetStartAddress(), target);
        if (address == LLDB_INVALID_ADDRESS)
          continue;
        auto [slot, added] = lowest.try_emplace(codeCopyOf(target, address), address);
        if (!added)
          slot->second = std::min(slot->second, address);
      }
    }
  }
  std::vector<uint64_t> result;
  for (const auto &[copy, address] : lowest)
    result.push_back(address);
  return result;
}

std::optional<DataLocation> debugInfoVariable(lldb::SBTarget &target, const std::string &name) {
  constexpr uint32_t kMaxDefinitions = 64; // one per module or file defining a static of the name
  lldb::SBValueList values = target.FindGlobalVariables(name.c_str(), kMaxDefinitions);
  std::optional<DataLocation> fileLocal;
  for (uint32_t i = 0; i < values.GetSize(); ++i) {
    lldb::SBValue value = values.GetValueAtIndex(i);
    lldb::ValueType kind = value.GetValueType();
    const char *found = value.GetName();
    if (!found || name != found ||
        (kind != lldb::eValueTypeVariableGlobal && kind != lldb::eValueTypeVariableStatic))
      continue;
    uint64_t address = loadAddress(value.GetAddress(), target);
    if (address == LLDB_INVALID_ADDRESS)
      continue;
    DataLocation place{address, value.GetByteSize()};
    if (kind == lldb::eValueTypeVariableGlobal)
      return place;
    if (!fileLocal)
      fileLocal = place;
  }
  return fileLocal;
}

std::optional<DataLocation> dataSymbol(lldb::SBTarget &target, const std::string &name) {
  std::vector<DataLocation> found = namedSymbols(target, name, lldb::eSymbolTypeData);
  return found.empty() ? std::nullopt : std::optional<DataLocation>(found.front());
}

} // namespace

std::optional<DataLocation> resolveVariable(lldb::SBTarget target, std::string_view name) {
  if (!target.IsValid() || name.empty())
    return std::nullopt;
  if (std::optional<uint64_t> address = literalAddress(name))
    return DataLocation{*address, 0};
  std::string wanted(name);
  if (std::optional<DataLocation> place = debugInfoVariable(target, wanted))
    return place;
  return dataSymbol(target, wanted);
}

std::vector<uint64_t> resolveLocation(lldb::SBTarget target, std::string_view location) {
  std::vector<uint64_t> result;
  if (!target.IsValid() || location.empty())
    return result;
  if (location.front() == '*') {
    if (std::optional<uint64_t> address = literalAddress(location))
      result.push_back(*address);
    return result;
  }
  size_t colon = location.rfind(':');
  std::optional<uint64_t> line = colon == location.npos || colon == 0
                                     ? std::nullopt
                                     : parseLocationNumber(location.substr(colon + 1));
  if (line && *line > 0 && *line <= UINT32_MAX)
    result = lineAddresses(target, location.substr(0, colon), static_cast<uint32_t>(*line));
  else
    result = symbolAddresses(target, std::string(location));
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

} // namespace strobe::lldb_plugin
