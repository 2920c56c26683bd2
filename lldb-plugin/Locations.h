// Target::resolve() over LLDB's symbol tables and line tables: the runtime addresses a location
// names, for breakpoints strobe places itself.
#pragma once

#include <lldb/API/SBTarget.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace strobe::lldb_plugin {

// `*ADDRESS`; FILE:LINE (where `breakpoint set --file FILE --line LINE` would stop: in each
// function, and in each inlined copy of one, the lowest address at which the line starts; no move
// to a nearby line); or a symbol name, exact, mangled or not (the code symbol of every module that
// defines it, not its PLT stubs). Sorted, without duplicates; empty when nothing matches.
std::vector<uint64_t> resolveLocation(lldb::SBTarget target, std::string_view location);

} // namespace strobe::lldb_plugin
