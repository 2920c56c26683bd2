#include "capture/AllocHooks.h"

#include <algorithm>
#include <array>

namespace strobe {
namespace {

// Larger "functions" are a symbol-size mistake, not an allocator.
constexpr uint64_t kMaxFunctionBytes = 64 * 1024;
// Tail-jump chains are short (reallocarray -> realloc -> malloc); more means the scan went astray.
constexpr size_t kMaxFunctionsPerHook = 16;
// A function without a symbol size is followed this far either side of where it was entered.
constexpr uint64_t kUnsizedReach = 16 * 1024;
constexpr size_t kMaxInstructions = 20000;
constexpr uint64_t kMaxInstructionBytes = 16;
// Code is read in aligned chunks: one never crosses a page, so a mapped page reads whole.
constexpr uint64_t kChunkBytes = 1024;
constexpr std::array<uint8_t, 4> kEndbr64 = {0xf3, 0x0f, 0x1e, 0xfa};

bool returnsFirstArgument(std::string_view function) {
  while (function.starts_with('_'))
    function.remove_prefix(1);
  return function.starts_with("memset") || function.starts_with("memcpy") ||
         function.starts_with("memmove");
}

uint64_t littleEndian64(const std::vector<uint8_t> &bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return value;
}

} // namespace

std::vector<HookSpec> allocHookSpecs(bool mmap) {
  using F = AllocFunction;
  using S = HookShape;
  std::vector<HookSpec> specs = {
      {"malloc", F::Malloc, S::Size},
      {"calloc", F::Calloc, S::CountSize},
      {"realloc", F::Realloc, S::Resize},
      {"reallocarray", F::ReallocArray, S::ResizeArray},
      {"free", F::Free, S::Release},
      {"memalign", F::Memalign, S::AlignSize},
      {"posix_memalign", F::PosixMemalign, S::PosixMemalign},
      {"aligned_alloc", F::AlignedAlloc, S::AlignSize},
      {"valloc", F::Valloc, S::Size},
      {"pvalloc", F::Pvalloc, S::PageSize},
      {"_Znwm", F::New, S::Size},
      {"_ZnwmRKSt9nothrow_t", F::New, S::Size},
      {"_Znam", F::NewArray, S::Size},
      {"_ZnamRKSt9nothrow_t", F::NewArray, S::Size},
      {"_ZnwmSt11align_val_t", F::NewAligned, S::Size},
      {"_ZnwmSt11align_val_tRKSt9nothrow_t", F::NewAligned, S::Size},
      {"_ZnamSt11align_val_t", F::NewArrayAligned, S::Size},
      {"_ZnamSt11align_val_tRKSt9nothrow_t", F::NewArrayAligned, S::Size},
      {"_ZdlPv", F::Delete, S::Release},
      {"_ZdlPvm", F::Delete, S::Release},
      {"_ZdlPvRKSt9nothrow_t", F::Delete, S::Release},
      {"_ZdlPvSt11align_val_t", F::Delete, S::Release},
      {"_ZdlPvmSt11align_val_t", F::Delete, S::Release},
      {"_ZdlPvSt11align_val_tRKSt9nothrow_t", F::Delete, S::Release},
      {"_ZdaPv", F::DeleteArray, S::Release},
      {"_ZdaPvm", F::DeleteArray, S::Release},
      {"_ZdaPvRKSt9nothrow_t", F::DeleteArray, S::Release},
      {"_ZdaPvSt11align_val_t", F::DeleteArray, S::Release},
      {"_ZdaPvmSt11align_val_t", F::DeleteArray, S::Release},
      {"_ZdaPvSt11align_val_tRKSt9nothrow_t", F::DeleteArray, S::Release},
  };
  if (mmap) {
    specs.push_back({"mmap", F::Mmap, S::Mmap});
    specs.push_back({"mmap64", F::Mmap, S::Mmap});
    specs.push_back({"munmap", F::Munmap, S::Munmap});
    specs.push_back({"mremap", F::Mremap, S::Mremap});
  }
  return specs;
}

bool waitsForReturn(HookShape shape, bool mmapHooked) {
  switch (shape) {
  case HookShape::Release:
    return mmapHooked;
  case HookShape::Munmap:
    return false;
  default:
    return true;
  }
}

std::optional<ExitSites> ExitScanner::scan(uint64_t entry, bool clearsBlock) {
  ExitSites sites;
  std::vector<uint64_t> work{entry};
  std::set<uint64_t> seen;
  bool decoded = false;
  while (!work.empty()) {
    uint64_t next = work.back();
    work.pop_back();
    if (seen.count(next))
      continue;
    if (seen.size() == kMaxFunctionsPerHook) {
      sites.unresolvedExits = true;
      break;
    }
    seen.insert(next);
    bool readable = scanFunction(next, clearsBlock, sites, work);
    decoded = decoded || (next == entry && readable);
  }
  if (!decoded || (sites.empty() && !sites.unresolvedExits))
    return std::nullopt;
  for (std::vector<uint64_t> *list : {&sites.returns, &sites.firstArgumentExits}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  return sites;
}

bool ExitScanner::scanFunction(uint64_t address, bool clearsBlock, ExitSites &sites,
                               std::vector<uint64_t> &work) {
  const SymbolInfo &symbol = symbolAt(address);
  bool sized = symbol.size != 0 && address >= symbol.start && address < symbol.start + symbol.size;
  if (sized && symbol.size > kMaxFunctionBytes) {
    sites.unresolvedExits = true;
    return false;
  }
  uint64_t start = sized ? symbol.start : address - std::min(address, kUnsizedReach);
  uint64_t end = sized ? symbol.start + symbol.size : address + kUnsizedReach;
  std::vector<uint64_t> paths{address};
  std::set<uint64_t> visited;
  bool decoded = false;
  while (!paths.empty()) {
    uint64_t pc = paths.back();
    paths.pop_back();
    bool falls = true;
    while (falls && pc >= start && pc < end && visited.insert(pc).second) {
      if (visited.size() > kMaxInstructions) {
        sites.unresolvedExits = true;
        return true;
      }
      // Without an extent, code after a call that never returns (an abort) runs on, past
      // padding, into the next function: where that one starts, this one has ended.
      if (!sized && pc != address && startsFunction(pc))
        break;
      std::optional<InstructionInfo> insn = decoder_.decode(codeAt(pc, end), pc);
      if (!insn) {
        sites.unresolvedExits = true;
        break;
      }
      decoded = true;
      switch (insn->kind) {
      case BranchKind::Return:
        sites.returns.push_back(pc);
        falls = false;
        break;
      case BranchKind::Jump:
      case BranchKind::ConditionalJump:
        if (insn->target) {
          uint64_t target = *insn->target;
          if (sized ? target >= start && target < end
                    : target == address || !startsFunction(target)) {
            if (sized || !insideOtherFunction(target, address))
              paths.push_back(target);
            else
              sites.unresolvedExits = true; // into the middle of another function
          } else {
            jumpOut(*insn, target, clearsBlock, sites, work);
          }
        }
        falls = insn->kind == BranchKind::ConditionalJump;
        break;
      case BranchKind::IndirectJump:
        sites.unresolvedExits = true;
        falls = false;
        break;
      default:
        break;
      }
      pc += insn->length;
    }
  }
  return decoded;
}

void ExitScanner::jumpOut(const InstructionInfo &jump, uint64_t target, bool clearsBlock,
                          ExitSites &sites, std::vector<uint64_t> &work) {
  uint64_t destination = throughStub(target);
  if (destination == 0) {
    sites.unresolvedExits = true;
    return;
  }
  const SymbolInfo &callee = symbolAt(destination);
  // No name of its own: a stripped local function, or a PLT stub the scan could not see through.
  std::string_view name = callee.function;
  bool anonymous = name.empty() || callee.start != destination ||
                   name.starts_with("___lldb_unnamed_symbol") || name.starts_with("*ABS*") ||
                   name.find("@plt") != std::string_view::npos;
  if (returnsFirstArgument(callee.function) || (clearsBlock && anonymous)) {
    // A trap at a conditional jump fires whether or not it is taken.
    if (jump.kind == BranchKind::Jump)
      sites.firstArgumentExits.push_back(jump.address);
    else
      sites.unresolvedExits = true;
    return;
  }
  sites.tailEntries.insert(destination);
  work.push_back(destination);
}

bool ExitScanner::insideOtherFunction(uint64_t address, uint64_t entry) {
  const SymbolInfo &symbol = symbolAt(address);
  return symbol.size != 0 && symbol.start != entry && address >= symbol.start &&
         address < symbol.start + symbol.size;
}

bool ExitScanner::startsFunction(uint64_t address) {
  const SymbolInfo &symbol = symbolAt(address);
  return !symbol.function.empty() && symbol.start == address;
}

const SymbolInfo &ExitScanner::symbolAt(uint64_t address) {
  auto it = symbols_.find(address);
  if (it == symbols_.end())
    it = symbols_.emplace(address, target_.symbolize(address)).first;
  return it->second;
}

std::span<const uint8_t> ExitScanner::codeAt(uint64_t address, uint64_t end) {
  window_.clear();
  for (uint64_t at = address; at < end && at < address + kMaxInstructionBytes; ++at) {
    uint64_t chunk = at / kChunkBytes * kChunkBytes;
    auto it = chunks_.find(chunk);
    if (it == chunks_.end())
      it = chunks_.emplace(chunk, target_.readMemory(chunk, kChunkBytes)).first;
    if (at - chunk >= it->second.size())
      break;
    window_.push_back(it->second[at - chunk]);
  }
  return window_;
}

uint64_t ExitScanner::throughStub(uint64_t address) {
  std::span<const uint8_t> window = codeAt(address, address + kMaxInstructionBytes);
  std::vector<uint8_t> bytes(window.begin(), window.end());
  uint64_t at = address;
  std::span<const uint8_t> code(bytes);
  if (decoder_.isa() == Isa::X86_64 && code.size() >= kEndbr64.size() &&
      std::equal(kEndbr64.begin(), kEndbr64.end(), code.begin())) {
    code = code.subspan(kEndbr64.size());
    at += kEndbr64.size();
  }
  std::optional<InstructionInfo> insn = decoder_.decode(code, at);
  if (!insn || insn->kind != BranchKind::IndirectJump || insn->memory.empty() ||
      !insn->memory.front().pcRelative)
    return address;
  uint64_t slot = effectiveAddress(insn->memory.front(), *insn, {});
  std::vector<uint8_t> value = target_.readMemory(slot, 8);
  if (value.size() != 8)
    return 0;
  uint64_t destination = littleEndian64(value);
  // A lazily bound slot still points back into its stub, at the resolver's path.
  bool intoStub = destination >= address && destination < address + 16;
  return destination == 0 || intoStub ? 0 : destination;
}

} // namespace strobe
