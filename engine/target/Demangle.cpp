#include "target/Demangle.h"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace strobe {

std::string demangledName(std::string_view symbol) {
  if (!symbol.starts_with("_Z"))
    return std::string(symbol);
  size_t suffix = std::min(symbol.find('@'), symbol.size());
  std::string mangled(symbol.substr(0, suffix));
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !demangled)
    return std::string(symbol);
  return demangled.get() + std::string(symbol.substr(suffix));
}

} // namespace strobe
