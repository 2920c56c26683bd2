#include "analysis/looptrace/CaptureAnnotator.h"

#include "analysis/looptrace/Scorer.h"

#include <algorithm>
#include <fmt/format.h>

namespace strobe {

CaptureAnnotator::CaptureAnnotator(const Capture &capture)
    : capture_(capture), decoder_(std::make_unique<InstructionDecoder>(capture.header.isa)) {
  auto name = [this](const SymbolInfo &symbol) {
    if (symbol.start != 0 && !symbol.function.empty())
      names_.emplace(symbol.start, symbol.function);
  };
  for (const auto &[pc, symbol] : capture.symbols)
    name(symbol);
  for (const auto &[pc, symbol] : capture.instructionLines)
    name(symbol);
}

CaptureAnnotator::~CaptureAnnotator() = default;

const ControlFlowGraph *CaptureAnnotator::graph(uint64_t start) {
  auto cached = graphs_.find(start);
  if (cached != graphs_.end())
    return cached->second.get();
  auto code = capture_.code.find(start);
  std::unique_ptr<ControlFlowGraph> &slot = graphs_[start];
  if (code != capture_.code.end() && !code->second.empty()) {
    auto name = names_.find(start);
    slot = std::make_unique<ControlFlowGraph>(*decoder_, code->second, start,
                                              name == names_.end() ? "" : name->second);
  }
  return slot.get();
}

std::optional<uint64_t> CaptureAnnotator::codedFunctionAt(uint64_t address) const {
  auto after = capture_.code.upper_bound(address);
  if (after == capture_.code.begin())
    return std::nullopt;
  auto holder = std::prev(after);
  if (address < holder->first + holder->second.size())
    return holder->first;
  return std::nullopt;
}

CaptureAnnotator::Key CaptureAnnotator::keyOf(uint64_t address, std::string &name) const {
  const ModuleInfo *module = capture_.moduleFor(address);
  Key key{module ? module->path : std::string(), 0};
  if (std::optional<uint64_t> coded = codedFunctionAt(address)) {
    key.start = *coded;
  } else {
    // A caller's address here is its call (ret - 1), filed there since Capture::callerSymbol;
    // earlier files filed it under ret: try both.
    const SymbolInfo *symbol = capture_.symbolFor(address);
    if (!symbol || symbol->start == 0)
      symbol = capture_.symbolFor(address + 1);
    if (symbol && symbol->start != 0 && address >= symbol->start &&
        (symbol->size == 0 || address < symbol->start + symbol->size))
      key.start = symbol->start;
  }
  auto known = names_.find(key.start);
  if (key.start == 0)
    name = fmt::format("[{}]", key.module.empty() ? "unknown" : key.module);
  else if (known != names_.end())
    name = known->second;
  else
    name = fmt::format("{:#x}", key.start);
  return key;
}

uint32_t CaptureAnnotator::idOf(const Key &key, const std::string &name) {
  auto [at, added] = ids_.emplace(key, static_cast<uint32_t>(functions_.size()));
  if (added)
    functions_.push_back({name, key.start, key.start == 0});
  return at->second;
}

void CaptureAnnotator::note(uint64_t address) {
  std::string name;
  Key key = keyOf(address, name);
  if (key.start == 0 || !graph(key.start))
    uncoded_[key].insert(address);
}

Place CaptureAnnotator::place(uint64_t address) {
  std::string name;
  Key key = keyOf(address, name);
  Place place{idOf(key, name), 0, 0, 0};
  if (const ControlFlowGraph *cfg = key.start != 0 ? graph(key.start) : nullptr) {
    if (const CfgInstruction *insn = cfg->instructionAtOrBefore(address)) {
      const BasicBlock &block = cfg->blocks()[insn->block];
      place.ordinal = static_cast<uint32_t>(insn - cfg->instructions().data());
      place.block = insn->block;
      place.blockOffset = place.ordinal - block.firstInstruction;
    }
    return place;
  }
  const std::set<uint64_t> &ranked = uncoded_[key];
  place.ordinal = static_cast<uint32_t>(std::distance(ranked.begin(), ranked.lower_bound(address)));
  return place;
}

Element CaptureAnnotator::element(uint64_t pc, std::optional<uint64_t> call) {
  Place at = place(pc);
  Element element{pc, at.function, at.ordinal, at.block, at.blockOffset, {}};
  if (call) {
    Place site = place(*call);
    element.context = CallingContext{site.function, site.ordinal};
  }
  return element;
}

ControlFlowEdges CaptureAnnotator::edges() const {
  ControlFlowEdges edges;
  for (const auto &[key, id] : ids_) {
    auto cfg = graphs_.find(key.start);
    if (key.start == 0 || cfg == graphs_.end() || !cfg->second)
      continue;
    for (const CfgEdge &edge : cfg->second->edges())
      edges.add(id, edge.from, edge.to);
  }
  return edges;
}

} // namespace strobe
