#include "capture/Capture.h"

namespace strobe {

const ModuleInfo *Capture::moduleFor(uint64_t addr) const {
  for (const ModuleInfo &m : modules)
    if (addr >= m.start && addr < m.end)
      return &m;
  return nullptr;
}

const SymbolInfo *Capture::symbolFor(uint64_t pc) const {
  auto it = symbols.find(pc);
  return it == symbols.end() ? nullptr : &it->second;
}

const SymbolInfo *Capture::callerSymbol(uint64_t ret) const {
  const SymbolInfo *call = symbolFor(ret - 1);
  return call ? call : symbolFor(ret);
}

} // namespace strobe
