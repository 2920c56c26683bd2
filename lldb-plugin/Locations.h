// Target::resolve() and Target::dataAddress() over LLDB's symbol tables, line tables and debug
// information: the runtime addresses a location names, for breakpoints strobe places itself, and
// the place of a variable strobe reads.
#pragma once

#include "target/Target.h"

#include <lldb/API/SBFileSpec.h>
#include <lldb/API/SBTarget.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strobe::lldb_plugin {

// The whole path a file spec names; empty when it names none.
std::string pathOf(const lldb::SBFileSpec &spec);

// `*ADDRESS`; FILE:LINE (where `breakpoint set --file FILE --line LINE` would stop: in each
// function, and in each inlined copy of one, the lowest address at which the line starts; no move
// to a nearby line); or a symbol name, exact, mangled or not (the code symbol of every module that
// defines it, not its PLT stubs). Sorted, without duplicates; empty when nothing matches.
std::vector<uint64_t> resolveLocation(lldb::SBTarget target, std::string_view location);

// `*ADDRESS` (size unknown), or a global or file-static variable by its exact name: from debug
// information where there is some (a global one before file-local ones), else from the data
// symbols. Thread-local variables have no single address and are not found.
std::optional<DataLocation> resolveVariable(lldb::SBTarget target, std::string_view name);

} // namespace strobe::lldb_plugin
