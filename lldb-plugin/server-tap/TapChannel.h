// The page of shared memory through which strobe's library inside lldb-server (ServerTapLibrary)
// hands a stop to the plugin inside LLDB and waits for its answer: a sample stop (ServerTap), or
// the stop after a single step of the thread `strobe step` is stepping (ServerSteps).
//
// lldb-server makes the page (a memfd named kTapChannelName) when it starts; the plugin finds it
// among the open files of the process's tracer. One stop at a time goes through it: lldb-server
// learns of every stop on one thread, in its wait for the inferior, and waits there for the answer.
//
//   state    lldb-server (the library)                   LLDB (the plugin)
//   Idle     a stop: fills kind, tid and registers
//   Posted   ...waits                                    claims it: Posted -> Taking
//   Taking   ...waits                                    samples or records; -> Taken or Declined
//   Taken    resumes the thread (a sample stop) or steps it again (a step's), -> Idle
//   Declined passes the stop on to lldb-server, -> Idle
//
// A side that waits too long takes the state back to Idle (the library: Posted -> Idle, or
// Taking -> Idle after a long wait), and the other side's exchange then fails: a stop is either
// resumed by the library or reported to lldb-server, never both. Each change is followed by a
// futex wake, so neither side polls.
#pragma once

#include "native/ExtendedRegsets.h"

#include <atomic>
#include <cstdint>

namespace strobe::lldb_plugin {

inline constexpr const char *kTapChannelName = "strobe-lldb-server-tap";
// Both sides' copies of this layout: raised with any change to it.
inline constexpr uint32_t kTapChannelVersion = 4;

struct TapChannel {
  enum State : uint32_t { Idle, Posted, Taking, Taken, Declined };
  enum Kind : uint32_t { SampleStop, StepStop };

  std::atomic<uint32_t> version; // kTapChannelVersion once lldb-server has set the page up
  // The process and signal whose stops the plugin takes; 0: none (the library takes nothing).
  std::atomic<int32_t> armedPid;
  std::atomic<int32_t> signo;
  // The thread a `strobe step` trace records; 0: none. A single step of it that delivers a signal
  // ends at the handler's entry, where the kernel reports it.
  std::atomic<int32_t> tracedTid;
  // The thread whose completed single steps the plugin takes; 0: none.
  std::atomic<int32_t> steppedTid;
  std::atomic<uint32_t> state; // State; the futex both sides wait on
  uint32_t kind;               // Kind of the stop, while Posted or Taking
  int32_t tid;                 // the stopped thread, while Posted or Taking
  uint32_t registersSize;      // bytes of `registers` filled
  uint32_t extendedSize;       // bytes of `extended` filled (step stops only)
  // The thread's NT_PRSTATUS register set (PTRACE_GETREGSET): x86-64 216 bytes, AArch64 272.
  alignas(16) uint8_t registers[512];
  // Its extended registers' register sets (native/ExtendedRegsets.h).
  alignas(16) uint8_t extended[kExtendedRegsetBytes];
};

static_assert(std::atomic<uint32_t>::is_always_lock_free &&
              std::atomic<int32_t>::is_always_lock_free);

// Waits while `word` holds `value`, for at most `timeoutNs`; wakes of another process count.
void waitWhile(std::atomic<uint32_t> &word, uint32_t value, uint64_t timeoutNs);
// Wakes every waiter of `word`, in any process.
void wakeAll(std::atomic<uint32_t> &word);

} // namespace strobe::lldb_plugin
