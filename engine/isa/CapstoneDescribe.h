// Per-ISA translation of Capstone's instruction detail into an InstructionInfo. Internal to
// engine/isa: its decoder sources include Capstone through here, no header outside them does.
#pragma once

#include "isa/InstructionInfo.h"

#include <capstone/capstone.h>

namespace strobe {

// Fill kind, target, memory and unusual of `info`, whose isa, address and length are set.
// `insn` must have been decoded with CS_OPT_DETAIL on.
void describeX86(const cs_insn &insn, InstructionInfo &info);
void describeAArch64(const cs_insn &insn, InstructionInfo &info);

} // namespace strobe
