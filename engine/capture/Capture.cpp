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

} // namespace strobe
