// Takes one sample of every thread at a stop, through the Target port, and keeps the capture's
// module and symbol tables current so that a capture ending at an exit or a crash still symbolizes.
#pragma once

#include "capture/Capture.h"
#include "capture/CaptureNames.h"
#include "capture/ProcFile.h"
#include "target/Target.h"

#include <cstdint>
#include <map>
#include <set>
#include <span>

namespace strobe {

class Sampler {
public:
  Sampler(Target &target, Capture &capture, unsigned stackDepth);

  // Reads every thread and appends one Sample per thread. Returns the number of threads read.
  size_t sampleAllThreads(uint64_t timeNs);
  // Reads thread `tid` alone and appends its Sample; whether it could be read.
  bool sampleThread(uint64_t tid, uint64_t timeNs);
  // Forgets what it keeps of threads that have ended (sampleAllThreads() does so at each stop).
  void retainListedThreads();
  // Symbolizes the pcs seen since the last call and captures the code of newly seen functions.
  void symbolizePending();
  void refreshModules() { names_.refreshModules(); }
  void programReplaced() { names_.programReplaced(); }

private:
  void retain(std::span<const uint64_t> tids);
  bool onCpu(uint64_t tid, uint64_t timeNs, bool inSyscall);

  Target &target_;
  Capture &capture_;
  unsigned stackDepth_;
  bool hostProcess_;
  ThreadSnapshot snapshot_;
  CaptureNames names_;
  ThreadProcFiles schedstats_;
  struct PreviousSample {
    uint64_t cpuNs;  // the thread's on-CPU time then
    uint64_t timeNs; // the stop's time
  };
  std::map<uint64_t, PreviousSample> previous_; // by tid
};

} // namespace strobe
