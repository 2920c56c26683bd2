// Takes one sample of every thread at a stop, through the Target port, and keeps the capture's
// module and symbol tables current so that a capture ending at an exit or a crash still symbolizes.
#pragma once

#include "capture/Capture.h"
#include "capture/CaptureNames.h"
#include "capture/ThreadCpu.h"
#include "target/Target.h"

#include <cstdint>
#include <map>
#include <set>

namespace strobe {

class Sampler {
public:
  Sampler(Target &target, Capture &capture, unsigned stackDepth);

  // Reads every thread and appends one Sample per thread. Returns the number of threads read.
  size_t sampleAllThreads(uint64_t timeNs);
  // Symbolizes the pcs seen since the last call and captures the code of newly seen functions.
  void symbolizePending();
  void refreshModules() { names_.refreshModules(); }

private:
  bool onCpu(uint64_t tid, bool inSyscall);

  Target &target_;
  Capture &capture_;
  unsigned stackDepth_;
  bool hostProcess_;
  ThreadSnapshot snapshot_;
  CaptureNames names_;
  struct ThreadCpuState {
    ThreadCpuClock clock;
    uint64_t lastNs; // on-CPU time at the thread's previous sample
    uint64_t seenAt; // the stop (sampleAllThreads call) that last read it
  };
  std::map<uint64_t, ThreadCpuState> cpu_; // by tid; a thread not seen at a stop is dropped
  uint64_t stops_ = 0;
};

} // namespace strobe
