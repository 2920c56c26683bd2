// `strobe mem`: records every heap event of the inferior (spec 003) through breakpoints planted
// once at start on each hooked function's entry and on the instructions where it can end.
//
// At an entry the tracker notes the thread's pending call (arguments, stack pointer, call stack);
// at an exit reached with the same stack pointer it reads the result and records the event. A
// release (free, delete, munmap) is recorded at its entry, so a block one thread frees and another
// receives appears in that order. The outermost tracked call of a thread wins: operator new calling
// malloc is one event. Cost: two traps per allocation (entry and exit), one per free.
#pragma once

#include "analysis/memory/HeapLedger.h"
#include "capture/AllocHooks.h"
#include "capture/Capture.h"
#include "capture/CaptureNames.h"
#include "target/Target.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace strobe {

struct AllocTrackerOptions {
  bool mmap = false;        // also anonymous mmap / munmap / mremap
  unsigned stackDepth = 16; // frames kept per event, the hooked function's own included
  // Hook only these (linkage names, e.g. "malloc", "_Znwm"); empty: the whole hook set.
  std::vector<std::string> functions;
};

struct AllocTrackerStats {
  std::vector<std::string> unknown;     // --functions names that are not in the hook set
  std::vector<std::string> hooked;      // symbols with their breakpoints planted
  std::vector<std::string> notFound;    // symbols the debugger could not resolve
  std::vector<std::string> unscannable; // found, but where they end could not be determined
  size_t entryBreakpoints = 0;
  size_t exitBreakpoints = 0;
  size_t failedBreakpoints = 0; // addresses the debugger refused
  uint64_t traps = 0;           // breakpoint hits handled
  uint64_t events = 0;          // events recorded
  uint64_t nestedCalls = 0;     // tracked calls inside another tracked call, not counted again
  uint64_t failedCalls = 0;     // allocations that returned nothing (not recorded)
  uint64_t abandonedCalls = 0;  // calls left without their exit being seen (longjmp, exception)
  uint64_t splitCalls = 0;      // reallocs whose old block another thread got before they returned
  uint64_t unreadable = 0;      // hits whose thread could not be read
  uint64_t replanted = 0;       // breakpoints planted again after a debugger command deleted them
};

class AllocTracker {
public:
  // Nanoseconds since the capture started; events are stamped with it.
  using Clock = std::function<uint64_t()>;

  AllocTracker(Target &target, Capture &capture, AllocTrackerOptions options, Clock clock);
  ~AllocTracker(); // removes every breakpoint it planted
  AllocTracker(const AllocTracker &) = delete;
  AllocTracker &operator=(const AllocTracker &) = delete;

  // Resolves the hook set and plants its breakpoints; the inferior must be stopped.
  void start();
  // Removes the breakpoints; calls still pending are abandoned. Events are kept.
  void stop();
  bool active() const { return !sites_.empty(); }
  // How many of its breakpoints a debugger command has deleted (see Breakpoint::present).
  size_t deletedBreakpoints() const;
  // Plants those again, for a user who deleted them by number and went on; how many it planted.
  // The inferior must be stopped.
  size_t replantDeleted();

  const AllocTrackerStats &stats() const { return stats_; }
  const AllocTrackerOptions &options() const { return options_; }
  // The live heap as the recorded events left it.
  const HeapLedger &ledger() const { return ledger_; }
  size_t pendingCalls() const { return pending_.size(); }

  // Symbolizes the event stacks' new pcs into the capture (return addresses at address - 1).
  void symbolizePending();
  void programReplaced() { names_.programReplaced(); }

private:
  struct Hook {
    HookSpec spec;
    uint64_t entry = 0;
    bool waits = false;
    // Where a waiting call ends. A release that does not wait is scanned too, only to learn
    // the hooked functions it forwards to (operator delete tail-jumping to free); its exits
    // get no breakpoints.
    ExitSites exits;
  };
  struct Site {
    const Hook *entryOf = nullptr;
    bool isReturn = false;
    bool isFirstArgumentExit = false;
    std::unique_ptr<Breakpoint> breakpoint;
  };
  struct PendingCall {
    const Hook *hook = nullptr;
    uint64_t entrySp = 0;
    std::array<uint64_t, 4> args{};
    std::vector<uint64_t> stack;
    bool releasedEarly = false; // its old block was already recorded as released
  };
  // The release a thread recorded last. Entered again for the same pointer with no hooked call
  // between, deeper on the stack or at the same level through a tail jump the release's code
  // makes, it is that release seen through a wrapper: operator delete calling (often
  // tail-jumping to) free, or a PLT stub before the function.
  struct LastRelease {
    uint64_t pointer = 0;
    uint64_t sp = 0;
    const Hook *hook = nullptr; // the release recorded
  };

  void plan(const HookSpec &spec, bool mmapHooked, ExitScanner &scanner);
  void plant();
  std::unique_ptr<Breakpoint> plantAt(uint64_t address);
  void onHit(uint64_t address, uint64_t tid);
  void onEntry(const Hook &hook, uint64_t tid);
  void onExit(uint64_t tid, bool firstArgument);
  bool readThread(uint64_t tid, unsigned depth);
  bool repeatsLastRelease(uint64_t tid, const Hook &hook);
  void complete(uint64_t tid, PendingCall &call, uint64_t result);
  void completeResize(uint64_t tid, PendingCall &call, uint64_t result, uint64_t size);
  void recordRelease(uint64_t tid, const Hook &hook);
  void releaseInFlight(uint64_t tid, uint64_t pointer, uint64_t size);
  void record(AllocEvent event);

  Target &target_;
  Capture &capture_;
  AllocTrackerOptions options_;
  Clock clock_;
  const RegisterTable &table_;
  AllocTrackerStats stats_;
  HeapLedger ledger_;
  std::vector<std::unique_ptr<Hook>> hooks_;
  std::map<uint64_t, Site> sites_;
  std::unordered_map<uint64_t, PendingCall> pending_; // by thread
  std::unordered_map<uint64_t, LastRelease> lastReleases_;
  ThreadSnapshot snapshot_;
  CaptureNames names_;
};

} // namespace strobe
