// The Tenet trace explorer's text format: one line per executed instruction, the registers that
// changed since the previous line as `name=0xVALUE` comma-separated (the first line holds them
// all; the pc, `rip` or `pc`, is on every line), then the memory that instruction accesses as
// `mr=0xADDR:HEXBYTES` / `mw=0xADDR:HEXBYTES` (bytes in memory order). A line describes the state
// BEFORE its instruction runs, so record i's changes and record i+1's memory share a line.
#pragma once

#include "codec/TraceRecord.h"
#include "target/Isa.h"

#include <span>
#include <string>

namespace strobe {

// Appends the lines for `records` (a step trace, or one thread's samples: their records carry no
// memory) to `out`. A record after a gap repeats every register.
void appendTenet(Isa isa, std::span<const TraceRecord> records, std::string &out);

} // namespace strobe
