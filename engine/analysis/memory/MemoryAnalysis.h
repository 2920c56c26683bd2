// The reductions of spec 003 over a capture's allocation events: usage per unit, per invocation,
// per time interval, and the blocks still live (leaks). Every one replays the events in order
// through a HeapLedger and charges each event to the units its stack names.
#pragma once

#include "analysis/memory/Attribution.h"
#include "analysis/memory/HeapLedger.h"
#include "analysis/memory/HeapUsage.h"
#include "capture/Capture.h"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace strobe {

enum class FreesMode {
  CallSite, // a free is charged to the unit whose code called free (the source's rule)
  Owner,    // a free is charged to the unit that allocated the block
};

struct MemoryAnalysisOptions {
  AttributionOptions attribution;
  FreesMode frees = FreesMode::CallSite;
};

// One event as the replay charges it.
struct ChargedEvent {
  const AllocEvent *event = nullptr;
  const std::vector<KeyId> *callers = nullptr; // the units whose code made the call
  Charge whole;                                // the whole event, as one unit would see it
  std::vector<std::pair<KeyId, Charge>> units; // what each unit it touches is charged
};

class UsageReplay {
public:
  UsageReplay(const Capture &capture, const MemoryAnalysisOptions &options);

  // Replays every event in order, handing each to `visit`.
  void run(const std::function<void(const ChargedEvent &)> &visit);

  Attributor &attributor() { return attributor_; }
  const HeapLedger &ledger() const { return ledger_; }

private:
  Charge &chargeFor(std::vector<std::pair<KeyId, Charge>> &units, KeyId key);

  const Capture &capture_;
  MemoryAnalysisOptions options_;
  Attributor attributor_;
  HeapLedger ledger_;
};

struct KeyUsage {
  KeyId key = 0;
  HeapUsage usage;
};

struct UsageTable {
  std::vector<MemoryKey> keys; // by KeyId
  std::vector<KeyUsage> rows;  // every unit that an event touched, in order of first appearance
  HeapUsage total;             // the whole process (in All mode rows overlap; this does not)
};

// A run of consecutive events charged to the same unit(s): one invocation of a library. Frees
// are charged where they were called (the invocation that made them), whatever --frees says.
struct InvocationRow {
  std::vector<KeyId> keys;
  HeapUsage usage;
  uint64_t startNs = 0;
  uint64_t endNs = 0;
  size_t events = 0;
};

struct InvocationTable {
  std::vector<MemoryKey> keys;
  std::vector<InvocationRow> rows;
  HeapUsage total;
};

// Usage within one window [startNs, startNs + width): each unit's sum, extremes and calls start
// from 0 at the window's start; `cumulative` is every unit's running sum at the window's end.
struct IntervalBlock {
  uint64_t startNs = 0;
  std::vector<KeyUsage> rows;
  std::vector<std::pair<KeyId, int64_t>> cumulative;
  HeapUsage total;
};

struct IntervalTable {
  std::vector<MemoryKey> keys;
  uint64_t widthNs = 0;
  std::vector<IntervalBlock> blocks; // windows with at least one event, in time order
  HeapUsage total;
};

// Live blocks (and mappings) that share an allocation stack.
struct LeakGroup {
  std::vector<uint64_t> stack;
  AllocFunction function = AllocFunction::Malloc;
  std::vector<KeyId> keys;
  uint64_t bytes = 0;
  uint64_t blocks = 0;
};

struct LeakTable {
  std::vector<MemoryKey> keys;
  std::vector<LeakGroup> groups; // most bytes first
  uint64_t bytes = 0;
  uint64_t blocks = 0;
};

UsageTable usageByKey(const Capture &capture, const MemoryAnalysisOptions &options);
InvocationTable usageByInvocation(const Capture &capture, const MemoryAnalysisOptions &options);
// Windows are aligned on the capture's start: window n holds floor(timeNs / widthNs) == n.
IntervalTable usageByInterval(const Capture &capture, const MemoryAnalysisOptions &options,
                              uint64_t widthNs);
LeakTable liveBlocksByStack(const Capture &capture, const MemoryAnalysisOptions &options);

} // namespace strobe
