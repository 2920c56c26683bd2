#include "capture/FunctionCode.h"

#include "isa/Disassembler.h"

#include <map>

namespace strobe {
namespace {

// Functions larger than this are not copied (huge generated code).
constexpr uint64_t kMaxCodeBytes = 64 * 1024;

} // namespace

bool captureFunctionCode(Target &target, Capture &capture, const SymbolInfo &function) {
  if (capture.code.count(function.start))
    return true;
  if (function.start == 0 || function.size == 0 || function.size > kMaxCodeBytes)
    return false;
  std::vector<uint8_t> bytes = target.readMemory(function.start, function.size);
  if (bytes.size() != function.size)
    return false;
  Disassembler disassembler(capture.header.isa);
  for (uint64_t offset = 0; offset < bytes.size();) {
    uint64_t address = function.start + offset;
    std::optional<Instruction> insn =
        disassembler.decode(std::span<const uint8_t>(bytes).subspan(offset), address);
    if (!insn)
      break;
    if (!capture.instructionLines.count(address)) {
      SymbolInfo line = target.symbolize(address);
      capture.instructionLines.emplace(address, SymbolInfo{{}, 0, 0, line.file, line.line, {}});
    }
    offset += insn->length;
  }
  capture.code.emplace(function.start, std::move(bytes));
  capture.symbols.emplace(function.start, function); // named even if no sample falls in it
  return true;
}

void captureCallersCode(Target &target, Capture &capture) {
  // Collected first: captureFunctionCode adds to capture.symbols.
  std::map<uint64_t, SymbolInfo> functions; // by start, one each
  for (const auto &[address, symbol] : capture.symbols)
    functions.emplace(symbol.start, symbol);
  for (const auto &[start, function] : functions)
    captureFunctionCode(target, capture, function);
}

} // namespace strobe
