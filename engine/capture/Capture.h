// Everything one capture holds, live or loaded from a trace file. Reports read only this.
#pragma once

#include "capture/AllocEvent.h"
#include "capture/LoopCaptureInfo.h"
#include "capture/StepTrace.h"
#include "target/Isa.h"
#include "target/Target.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strobe {

struct Sample {
  uint64_t timeNs = 0; // since the capture started
  uint64_t tid = 0;
  bool onCpu = true;           // the thread consumed CPU since its previous sample
  bool inSyscall = false;      // stopped inside a system call
  std::vector<uint64_t> stack; // stack[0] = pc, stack[1] = caller, ...
  std::vector<uint64_t> regs;  // registerTable(isa) order
};

struct CaptureHeader {
  Isa isa = Isa::X86_64;
  int pid = 0;
  std::string program;   // main executable path
  std::string debugger;  // "lldb" or "gdb"
  uint64_t periodNs = 0; // mean sampling period
  unsigned stackDepth = 2;
  uint64_t startUnixNs = 0;
};

struct ThreadInfo {
  uint64_t tid = 0;
  std::string name;
};

struct Capture {
  CaptureHeader header;
  std::vector<Sample> samples; // every thread, in time order
  std::vector<ThreadInfo> threads;
  std::vector<ModuleInfo> modules;
  // symbolize(address) of every pc a stack holds and of the call before each return address
  // (return address - 1: filed under the return address itself, a pc sampled there would name
  // the line after the call, or the next function after a call that does not return).
  std::map<uint64_t, SymbolInfo> symbols;
  std::map<uint64_t, std::vector<uint8_t>> code;   // function start -> its bytes (annotate)
  std::map<uint64_t, SymbolInfo> instructionLines; // each instruction of a coded function
  std::optional<LoopCaptureInfo> loop;             // `strobe loop`
  std::vector<StepTrace> stepTraces;               // `strobe step`, in the order taken
  std::vector<AllocEvent> allocEvents;             // `strobe mem`, in the order they happened
  uint64_t stops = 0;                              // stops the capture made
  uint64_t durationNs = 0;                         // wall time the capture ran
  std::string endReason;                           // how the capture ended, in words

  // The module whose mapping covers `addr`, if any.
  const ModuleInfo *moduleFor(uint64_t addr) const;
  const SymbolInfo *symbolFor(uint64_t pc) const;
  // The call that return address `ret` follows; for a file written before calls were filed at
  // ret - 1, the symbol filed under `ret`.
  const SymbolInfo *callerSymbol(uint64_t ret) const;
};

} // namespace strobe
