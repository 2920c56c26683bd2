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

// Appends the lines of records given one at a time (a step trace, or one thread's samples: their
// records carry no memory) to a string. A record after a gap repeats every register. Each line
// is written when the next record, which holds its memory, is added, the last by finish().
class TenetWriter {
public:
  TenetWriter(Isa isa, std::string &out);
  void add(const TraceRecord &record);
  void finish();

private:
  // The pending record's line, with the memory of `next` (null: none).
  void writePending(const TraceRecord *next);

  const RegisterTable &table_;
  size_t tenetCount_; // leading registers of the table that Tenet knows
  std::string &out_;
  bool havePending_ = false;
  TraceRecord pending_;                // added, its line not yet written
  std::vector<uint64_t> previousRegs_; // of the line before pending_'s; empty: none
};

// All of `records` at once.
void appendTenet(Isa isa, std::span<const TraceRecord> records, std::string &out);

} // namespace strobe
