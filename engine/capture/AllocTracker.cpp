#include "capture/AllocTracker.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <fstream>

namespace strobe {
namespace {

constexpr uint64_t kMapAnonymous = 0x20; // Linux, on x86-64 and AArch64 alike
constexpr uint64_t kMapFailed = ~uint64_t{0};
constexpr uint64_t kPage = 4096;

bool isMapping(const HookSpec &spec) {
  return spec.shape == HookShape::Mmap || spec.shape == HookShape::Munmap ||
         spec.shape == HookShape::Mremap;
}

bool isResize(HookShape shape) {
  return shape == HookShape::Resize || shape == HookShape::ResizeArray ||
         shape == HookShape::Mremap;
}

bool isRelease(HookShape shape) {
  return shape == HookShape::Release || shape == HookShape::Munmap;
}

std::optional<uint64_t> product(uint64_t n, uint64_t size) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, size, &bytes))
    return std::nullopt;
  return bytes;
}

AllocTracker::Clock steadyClockFromNow() {
  auto start = std::chrono::steady_clock::now();
  return [start] {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now() - start)
                                     .count());
  };
}

} // namespace

AllocTracker::AllocTracker(Target &target, Capture &capture, AllocTrackerOptions options,
                           Clock clock)
    : target_(target), capture_(capture), options_(std::move(options)),
      clock_(clock ? std::move(clock) : steadyClockFromNow()), table_(registerTable(target.isa())),
      names_(target, capture) {}

AllocTracker::~AllocTracker() { stop(); }

void AllocTracker::start() {
  if (active())
    return;
  stats_.unknown.clear();
  stats_.hooked.clear();
  stats_.notFound.clear();
  stats_.unscannable.clear();
  stats_.entryBreakpoints = stats_.exitBreakpoints = stats_.failedBreakpoints = 0;

  const std::vector<HookSpec> hookSet = allocHookSpecs(true);
  for (const std::string &name : options_.functions)
    if (std::none_of(hookSet.begin(), hookSet.end(),
                     [&](const HookSpec &spec) { return spec.symbol == name; }))
      stats_.unknown.push_back(name);
  std::vector<HookSpec> specs;
  for (const HookSpec &spec : hookSet) {
    bool chosen = options_.functions.empty()
                      ? options_.mmap || !isMapping(spec)
                      : std::find(options_.functions.begin(), options_.functions.end(),
                                  spec.symbol) != options_.functions.end();
    if (chosen)
      specs.push_back(spec);
  }
  bool mmapHooked = std::any_of(specs.begin(), specs.end(), isMapping);
  ExitScanner scanner(target_, target_.isa());
  for (const HookSpec &spec : specs)
    plan(spec, mmapHooked, scanner);
  plant();
}

void AllocTracker::plan(const HookSpec &spec, bool mmapHooked, ExitScanner &scanner) {
  std::vector<uint64_t> addresses = target_.resolve(spec.symbol);
  if (addresses.empty()) {
    stats_.notFound.emplace_back(spec.symbol);
    return;
  }
  bool hooked = false;
  for (uint64_t address : addresses) {
    // An alias of a function already hooked (glibc's aligned_alloc is memalign) is covered.
    if (std::any_of(hooks_.begin(), hooks_.end(),
                    [address](const std::unique_ptr<Hook> &h) { return h->entry == address; })) {
      hooked = true;
      continue;
    }
    auto hook = std::make_unique<Hook>();
    hook->spec = spec;
    hook->entry = address;
    hook->waits = waitsForReturn(spec.shape, mmapHooked);
    if (hook->waits || spec.shape == HookShape::Release) {
      std::optional<ExitSites> exits = scanner.scan(address, spec.shape == HookShape::CountSize);
      if (exits)
        hook->exits = std::move(*exits);
      else if (hook->waits)
        continue;
      else
        hook->exits.unresolvedExits = true; // what it forwards to is unknown
    }
    hooks_.push_back(std::move(hook));
    hooked = true;
  }
  (hooked ? stats_.hooked : stats_.unscannable).emplace_back(spec.symbol);
}

void AllocTracker::plant() {
  for (const std::unique_ptr<Hook> &hook : hooks_) {
    sites_[hook->entry].entryOf = hook.get();
    if (!hook->waits)
      continue;
    for (uint64_t address : hook->exits.returns)
      sites_[address].isReturn = true;
    for (uint64_t address : hook->exits.firstArgumentExits)
      sites_[address].isFirstArgumentExit = true;
  }
  for (auto &[address, site] : sites_) {
    site.breakpoint = plantAt(address);
    if (!site.breakpoint)
      ++stats_.failedBreakpoints;
    else if (site.entryOf)
      ++stats_.entryBreakpoints;
    else
      ++stats_.exitBreakpoints;
  }
}

std::unique_ptr<Breakpoint> AllocTracker::plantAt(uint64_t address) {
  return target_.insertBreakpoint(address, [this, address](uint64_t tid) { onHit(address, tid); });
}

size_t AllocTracker::deletedBreakpoints() const {
  return static_cast<size_t>(std::ranges::count_if(sites_, [](const auto &entry) {
    return entry.second.breakpoint && !entry.second.breakpoint->present();
  }));
}

size_t AllocTracker::replantDeleted() {
  size_t planted = 0;
  for (auto &[address, site] : sites_) {
    if (!site.breakpoint || site.breakpoint->present())
      continue;
    site.breakpoint.reset(); // what is left of it goes before its successor takes the address
    site.breakpoint = plantAt(address);
    if (site.breakpoint)
      ++planted;
    else
      ++stats_.failedBreakpoints;
  }
  stats_.replanted += planted;
  return planted;
}

void AllocTracker::stop() {
  sites_.clear(); // removes the breakpoints
  hooks_.clear();
  stats_.abandonedCalls += pending_.size();
  pending_.clear();
  lastReleases_.clear();
}

void AllocTracker::onHit(uint64_t address, uint64_t tid) {
  ++stats_.traps;
  auto it = sites_.find(address);
  if (it == sites_.end())
    return;
  const Site &site = it->second;
  if (site.entryOf)
    onEntry(*site.entryOf, tid);
  if (site.isReturn || site.isFirstArgumentExit)
    onExit(tid, site.isFirstArgumentExit);
}

bool AllocTracker::readThread(uint64_t tid, unsigned depth) {
  if (!target_.readThread(tid, depth, snapshot_)) {
    ++stats_.unreadable;
    return false;
  }
  snapshot_.regs.resize(table_.regs.size());
  return true;
}

void AllocTracker::onEntry(const Hook &hook, uint64_t tid) {
  if (auto outer = pending_.find(tid); outer != pending_.end()) {
    if (!readThread(tid, 1))
      return;
    uint64_t sp = snapshot_.regs[table_.sp];
    const PendingCall &call = outer->second;
    // Deeper on the stack: called from inside the pending call. At the same depth: either a tail
    // jump of the pending call, or a new call after the pending one ended unseen.
    bool tailJump =
        call.hook->exits.tailEntries.count(hook.entry) || call.hook->exits.unresolvedExits;
    if (sp < call.entrySp || (sp == call.entrySp && tailJump)) {
      ++stats_.nestedCalls;
      return;
    }
    ++stats_.abandonedCalls;
    pending_.erase(outer);
  }
  if (hook.spec.shape == HookShape::Release && repeatsLastRelease(tid, hook)) {
    ++stats_.nestedCalls;
    return;
  }
  lastReleases_.erase(tid);
  if (!readThread(tid, std::max(options_.stackDepth, 1u)))
    return;
  names_.noteThread(tid);
  if (isRelease(hook.spec.shape))
    recordRelease(tid, hook);
  if (!hook.waits)
    return;
  PendingCall call;
  call.hook = &hook;
  call.entrySp = snapshot_.regs[table_.sp];
  for (size_t i = 0; i < call.args.size() && i < table_.argumentRegs.size(); ++i)
    call.args[i] = snapshot_.regs[table_.argumentRegs[i]];
  // A file mapping is not heap; nothing runs inside mmap that a hook would see.
  if (hook.spec.shape == HookShape::Mmap && !(call.args[3] & kMapAnonymous))
    return;
  call.stack = snapshot_.stack;
  pending_[tid] = std::move(call);
}

bool AllocTracker::repeatsLastRelease(uint64_t tid, const Hook &hook) {
  auto it = lastReleases_.find(tid);
  if (it == lastReleases_.end())
    return false;
  const LastRelease &last = it->second;
  if (!readThread(tid, 1) || snapshot_.regs[table_.argumentRegs[0]] != last.pointer)
    return false;
  uint64_t sp = snapshot_.regs[table_.sp];
  // At the same level without a tail jump to here it is a new call: free(NULL) twice in a row.
  const ExitSites &forwards = last.hook->exits;
  bool forwarded = forwards.tailEntries.count(hook.entry) || forwards.unresolvedExits;
  // The entry stays: a release can pass through several wrappers (libstdc++'s sized delete[]
  // -> delete[] -> delete -> free), each one a hooked entry.
  return sp < last.sp || (sp == last.sp && forwarded);
}

void AllocTracker::recordRelease(uint64_t tid, const Hook &hook) {
  AllocEvent event;
  event.timeNs = clock_();
  event.tid = tid;
  event.function = hook.spec.function;
  event.previous = snapshot_.regs[table_.argumentRegs[0]];
  if (hook.spec.shape == HookShape::Munmap)
    event.previousSize = snapshot_.regs[table_.argumentRegs[1]];
  event.stack = snapshot_.stack;
  // A waiting release sees what runs inside it as nested instead.
  if (hook.spec.shape == HookShape::Release && !hook.waits)
    lastReleases_[tid] = {event.previous, snapshot_.regs[table_.sp], &hook};
  record(std::move(event));
}

void AllocTracker::onExit(uint64_t tid, bool firstArgument) {
  auto it = pending_.find(tid);
  if (it == pending_.end())
    return;
  if (!readThread(tid, 1))
    return;
  // A different stack pointer: the exit of a call nested in the pending one.
  if (snapshot_.regs[table_.sp] != it->second.entrySp)
    return;
  uint64_t result =
      firstArgument ? snapshot_.regs[table_.argumentRegs[0]] : snapshot_.regs[table_.returnReg];
  PendingCall call = std::move(it->second);
  pending_.erase(it);
  complete(tid, call, result);
}

void AllocTracker::complete(uint64_t tid, PendingCall &call, uint64_t result) {
  const std::array<uint64_t, 4> &a = call.args;
  std::optional<uint64_t> size;
  switch (call.hook->spec.shape) {
  case HookShape::Size:
    size = a[0];
    break;
  case HookShape::CountSize:
    size = product(a[0], a[1]);
    break;
  case HookShape::PageSize:
    size = (a[0] + kPage - 1) / kPage * kPage;
    break;
  case HookShape::AlignSize:
    size = a[1];
    break;
  case HookShape::PosixMemalign: {
    if (static_cast<uint32_t>(result) != 0) {
      ++stats_.failedCalls;
      return;
    }
    std::vector<uint8_t> bytes = target_.readMemory(a[0], 8);
    result = 0;
    for (size_t i = 0; i < bytes.size() && i < 8; ++i)
      result |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    size = a[2];
    break;
  }
  case HookShape::Resize:
    completeResize(tid, call, result, a[1]);
    return;
  case HookShape::ResizeArray:
    // An overflowing n x size fails without touching the block.
    if (std::optional<uint64_t> bytes = product(a[1], a[2]))
      completeResize(tid, call, result, *bytes);
    else
      ++stats_.failedCalls;
    return;
  case HookShape::Mremap:
    completeResize(tid, call, result, a[2]);
    return;
  case HookShape::Mmap:
    if (result == kMapFailed)
      result = 0;
    size = a[1];
    break;
  case HookShape::Release:
  case HookShape::Munmap:
    return; // recorded at the entry
  }
  if (result == 0 || !size) {
    ++stats_.failedCalls;
    return;
  }
  releaseInFlight(tid, result, *size);
  AllocEvent event;
  event.timeNs = clock_();
  event.tid = tid;
  event.function = call.hook->spec.function;
  event.pointer = result;
  event.size = *size;
  event.stack = std::move(call.stack);
  record(std::move(event));
}

void AllocTracker::completeResize(uint64_t tid, PendingCall &call, uint64_t result, uint64_t size) {
  bool mapping = call.hook->spec.shape == HookShape::Mremap;
  uint64_t old = call.args[0];
  AllocEvent event;
  event.tid = tid;
  event.function = call.hook->spec.function;
  event.stack = std::move(call.stack);
  if (result == (mapping ? kMapFailed : 0)) {
    // realloc(p, 0) frees p and returns NULL; any other NULL is a failure that changed nothing.
    if (mapping || size != 0 || old == 0 || call.releasedEarly) {
      ++stats_.failedCalls;
      return;
    }
    event.timeNs = clock_();
    event.previous = old;
    record(std::move(event));
    return;
  }
  releaseInFlight(tid, result, size);
  event.timeNs = clock_();
  event.pointer = result;
  event.size = size;
  if (call.releasedEarly) {
    event.part = EventPart::ResultPart;
  } else {
    event.previous = old;
    event.previousSize = mapping ? call.args[1] : 0;
  }
  record(std::move(event));
}

void AllocTracker::releaseInFlight(uint64_t tid, uint64_t pointer, uint64_t size) {
  uint64_t end = pointer + std::max<uint64_t>(size, 1);
  for (auto &[other, call] : pending_) {
    if (other == tid || call.releasedEarly || !isResize(call.hook->spec.shape) || call.args[0] == 0)
      continue;
    bool mapping = call.hook->spec.shape == HookShape::Mremap;
    uint64_t old = call.args[0];
    uint64_t oldEnd = old + (mapping ? std::max<uint64_t>(call.args[1], 1) : 1);
    if (old >= end || pointer >= oldEnd)
      continue;
    // This thread received memory the pending resize still owned: the resize released it first.
    AllocEvent event;
    event.timeNs = clock_();
    event.tid = other;
    event.function = call.hook->spec.function;
    event.part = EventPart::ReleasePart;
    event.previous = old;
    event.previousSize = mapping ? call.args[1] : 0;
    event.stack = call.stack;
    call.releasedEarly = true;
    ++stats_.splitCalls;
    record(std::move(event));
  }
}

void AllocTracker::record(AllocEvent event) {
  names_.noteStack(event.stack);
  ledger_.apply(event, capture_.allocEvents.size());
  capture_.allocEvents.push_back(std::move(event));
  ++stats_.events;
  // Named at once, while the process is there: the tables printed at an exit need the names, and
  // the debugger can no longer give them then. Call sites repeat, so this is rare after a while.
  if (names_.pending())
    names_.symbolizePending();
}

void AllocTracker::symbolizePending() { names_.symbolizePending(); }

} // namespace strobe
