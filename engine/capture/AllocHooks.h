// What the allocation tracker hooks (spec 003's hook set) and where a hooked call can end: the
// breakpoints are planted once at `mem start`, on each function's entry and on every instruction
// that can leave it, because a debugger cannot plant a return breakpoint from inside a hit.
#pragma once

#include "capture/AllocEvent.h"
#include "isa/InstructionInfo.h"
#include "target/Target.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <vector>

namespace strobe {

// How a hooked function's arguments and result are read (the platform ABI's argument registers).
enum class HookShape : uint8_t {
  Size,          // (size) -> pointer; also operator new (size, align)
  CountSize,     // calloc (n, size): n x size, overflow-checked
  PageSize,      // pvalloc (size): the size rounded up to a page
  AlignSize,     // memalign / aligned_alloc (alignment, size)
  PosixMemalign, // (&pointer, alignment, size) -> 0 on success, the block in *pointer
  Resize,        // realloc (pointer, size)
  ResizeArray,   // reallocarray (pointer, n, size)
  Release,       // free / operator delete (pointer, ...)
  Mmap,          // (address, length, prot, flags, fd, offset): anonymous mappings only
  Munmap,        // (address, length)
  Mremap,        // (old, old length, new length, flags, ...)
};

struct HookSpec {
  std::string_view symbol; // exact linkage name, as Target::resolve takes it
  AllocFunction function;
  HookShape shape;
};

// The hook set: the heap functions, then (with `mmap`) the mapping functions. Aliases (glibc's
// aligned_alloc is memalign) resolve to one address; the first spec naming it wins.
std::vector<HookSpec> allocHookSpecs(bool mmap);

// An allocation's result is read where the call ends, so these wait for the return. A release
// is recorded at its entry; it waits only when a tracked call can run inside it (free unmapping
// a large block, with mapping hooks planted).
bool waitsForReturn(HookShape shape, bool mmapHooked);

// Where a call to one function can end, found by disassembling it and the functions it
// tail-jumps to.
struct ExitSites {
  std::vector<uint64_t> returns; // ret instructions, in the function or in tail-jump targets
  // Tail jumps into memset / memcpy / memmove (glibc's calloc clears its block with a tail call to
  // memset): the call's result is that function's first argument, read at the jump, so the
  // tracker never traps in functions everyone calls.
  std::vector<uint64_t> firstArgumentExits;
  std::set<uint64_t> tailEntries; // functions it continues in by a tail jump (PLT stubs followed)
  // It may also leave by a jump the scan cannot follow (a register, an unresolved stub).
  bool unresolvedExits = false;

  bool empty() const { return returns.empty() && firstArgumentExits.empty(); }
};

// Finds exits by recursive descent from the entry: every path is followed through its branches
// (calls return, so they fall through) until a return or a jump out of the function. The function
// is bounded by its symbol when the debugger knows its size, else (a local function of a library
// without debug info) by a byte and instruction budget around the entry.
class ExitScanner {
public:
  ExitScanner(Target &target, Isa isa) : target_(target), decoder_(isa) {}

  // `clearsBlock`: the function is calloc, which may clear its block with a tail call to memset;
  // a tail jump of it into a function the debugger cannot name is taken to be that memset.
  // Nullopt when its code could not be read or decoded, or no path leaves it. Sites that hold only
  // unresolved exits (a tail jump through a stub not bound yet) still serve: any exit reached with
  // the entry's stack pointer ends the call, and the stub's target is usually hooked too.
  std::optional<ExitSites> scan(uint64_t entry, bool clearsBlock = false);

private:
  // False when not one instruction of it could be decoded.
  bool scanFunction(uint64_t address, bool clearsBlock, ExitSites &sites,
                    std::vector<uint64_t> &work);
  void jumpOut(const InstructionInfo &jump, uint64_t target, bool clearsBlock, ExitSites &sites,
               std::vector<uint64_t> &work);
  bool startsFunction(uint64_t address);
  // Inside a function the debugger knows the extent of, other than the one at `entry`.
  bool insideOtherFunction(uint64_t address, uint64_t entry);
  // Up to one instruction's bytes at `address`, not past `end`, from a cache of aligned chunks.
  std::span<const uint8_t> codeAt(uint64_t address, uint64_t end);
  // The function a PLT-style stub (`jmp [rip+slot]`) at `address` jumps to; `address` itself when
  // it is not a stub; 0 when the stub's slot cannot be read or is not bound yet.
  uint64_t throughStub(uint64_t address);
  const SymbolInfo &symbolAt(uint64_t address);

  Target &target_;
  InstructionDecoder decoder_;
  std::map<uint64_t, std::vector<uint8_t>> chunks_;
  std::map<uint64_t, SymbolInfo> symbols_;
  std::vector<uint8_t> window_;
};

} // namespace strobe
