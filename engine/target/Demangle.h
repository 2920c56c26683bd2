// The name strobe shows for a symbol without debug information, the same in both debuggers: an
// Itanium C++ name demangled as GDB itself shows it (libstdc++'s demangler, which GDB's libiberty
// also is; a suffix from '@' on, as in "_Znwm@plt", kept), anything else as the symbol table
// spells it. LLDB's own demangler spells many names differently ("<char>>" for "<char> >").
#pragma once

#include <string>
#include <string_view>

namespace strobe {

std::string demangledName(std::string_view symbol);

} // namespace strobe
