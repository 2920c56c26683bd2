// The real-time reduction of spec 002: identical (thread, state, stack) samples collapse into one
// count. The live capture feeds it sample by sample and a loaded trace file rebuilds it by feeding
// its samples, so both go through add(). Nothing symbolic happens until a view is asked for.
#pragma once

#include "capture/Capture.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strobe {

struct ProfileKey {
  uint64_t tid = 0;
  bool onCpu = true;
  bool inSyscall = false;
  std::vector<uint64_t> stack; // pc, caller's return address, deeper return addresses

  bool operator==(const ProfileKey &) const = default;
};

struct ProfileKeyHash {
  size_t operator()(const ProfileKey &key) const;
};

struct FrameSymbols {
  const SymbolInfo *symbol; // null when the capture holds none
  const ModuleInfo *module; // null when no module covers it
};

// Frame i of a stack: frame 0 is the pc itself; deeper frames are return addresses, named after
// their call (the symbol filed for the call before the return address).
FrameSymbols frameAt(const Capture &capture, const std::vector<uint64_t> &stack, size_t i);

struct SampleFilter {
  bool onCpuOnly = false;
  std::optional<uint64_t> tid;

  bool accepts(const ProfileKey &key) const;
};

// Spaces that are not modules: a thread parked in a system call, and a pc no module covers.
inline constexpr std::string_view kSyscallSpace = "[syscall]";
inline constexpr std::string_view kUnknown = "[unknown]";

struct SpaceRow {
  std::string space; // module path, kSyscallSpace or kUnknown
  uint64_t samples = 0;
};

struct MatrixRow {
  uint64_t id = 0;                        // pid or tid
  std::map<std::string, uint64_t> spaces; // space (as in SpaceRow) -> samples
  uint64_t samples = 0;
};

struct CallerRow {
  std::string function; // kUnknown when unsymbolized, empty when the stack had no frame 1
  std::string module;
  std::string file; // the call site, from the return address's symbol (looked up at ret - 1)
  uint32_t line = 0;
  uint64_t samples = 0;
};

struct FunctionRow {
  std::string function; // physical function; kUnknown when unsymbolized
  std::string module;   // path, or kUnknown
  uint64_t self = 0;
  uint64_t inclusive = 0;         // samples holding the function anywhere on their stack
  std::vector<CallerRow> callers; // of the self samples, by frame 1
};

struct LineRow {
  std::string file; // full path; empty when the pc had no line info
  uint32_t line = 0;
  // Every function with samples at this line (one line of an inlined header can be code in
  // many), the most sampled first.
  std::vector<std::string> functions;
  uint64_t samples = 0;
};

struct InstructionRow {
  uint64_t pc = 0;
  std::string module;        // path, or kUnknown
  uint64_t moduleOffset = 0; // pc - load bias: the address the module's own tools show
  std::string function;      // empty when unsymbolized
  uint64_t functionOffset = 0;
  std::vector<std::string> inlined; // innermost first
  uint64_t samples = 0;
};

class Profile {
public:
  void add(const Sample &sample);

  uint64_t samples() const { return samples_; } // every sample added
  size_t distinctStacks() const { return counts_.size(); }
  uint64_t count(const SampleFilter &filter) const;
  std::set<uint64_t> threads(const SampleFilter &filter) const;
  std::map<uint64_t, uint64_t> byPc(const SampleFilter &filter) const;

  // Views. `capture` lends its module, symbol and header tables, never its samples. Each view is
  // sorted by samples, descending, ties by name so that reports are deterministic.
  std::vector<MatrixRow> byProcess(const Capture &capture, const SampleFilter &filter) const;
  std::vector<MatrixRow> byThread(const Capture &capture, const SampleFilter &filter) const;
  std::vector<SpaceRow> byModule(const Capture &capture, const SampleFilter &filter) const;
  std::vector<FunctionRow> byFunction(const Capture &capture, const SampleFilter &filter) const;
  std::vector<LineRow> byLine(const Capture &capture, const SampleFilter &filter) const;
  std::vector<InstructionRow> byInstruction(const Capture &capture,
                                            const SampleFilter &filter) const;
  // Each distinct (thread, state, stack) with its samples, by thread, then stack: what folded
  // stacks and pprof are made of.
  std::vector<std::pair<ProfileKey, uint64_t>> stacks(const SampleFilter &filter) const;

private:
  std::vector<MatrixRow> matrix(const Capture &capture, const SampleFilter &filter,
                                bool perThread) const;

  std::unordered_map<ProfileKey, uint64_t, ProfileKeyHash> counts_;
  ProfileKey scratch_; // reused by add() so a repeated stack costs no allocation
  uint64_t samples_ = 0;
};

} // namespace strobe
