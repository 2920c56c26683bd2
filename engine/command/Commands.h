// The table of every `strobe` subcommand: names, options and help text. The parser, `strobe help`
// and the README's command reference all come from here.
#pragma once

#include "command/CommandLine.h"

#include <vector>

namespace strobe {

const std::vector<SubcommandSpec> &subcommands();

// The subcommands that need no debugger (strobe-report offers exactly these).
bool worksOffline(const std::string &name);

} // namespace strobe
