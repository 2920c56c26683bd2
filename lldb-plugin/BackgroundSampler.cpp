#include "BackgroundSampler.h"

#include "LldbTarget.h"
#include "capture/ProcFile.h"
#include "command/Session.h"

#include <lldb/API/SBError.h>

#include <chrono>
#include <mutex>
#include <signal.h>

namespace strobe::lldb_plugin {
namespace {

thread_local const BackgroundSampler *samplerOfThisThread = nullptr;

} // namespace

bool BackgroundSampler::endingOnThisThread() {
  return samplerOfThisThread && samplerOfThisThread->exitRequested_;
}

BackgroundSampler::BackgroundSampler(LldbTarget &target, lldb::SBProcess process, int hostPid,
                                     int signo)
    : target_(target), process_(process), hostPid_(hostPid), signo_(signo),
      wasAsync_(target.debugger().GetAsync()) {
  // Before the thread's first continue reads the flag.
  if (wasAsync_)
    target_.debugger().SetAsync(false);
  thread_ = std::thread([this] { run(); });
}

BackgroundSampler::~BackgroundSampler() { stop(); }

void BackgroundSampler::stop() {
  if (!thread_.joinable())
    return;
  if (!finished_) {
    // The process may be running with no sample signal on its way: this one brings it to a
    // stop the thread can end on. LldbTarget::settle() absorbs whichever signal is left over.
    // A program that blocks the sample signal in every thread would hold it, and this thread
    // in its continue, until it unblocks it: then SIGSTOP, which nothing blocks, stops it as
    // `process interrupt` would, and the user is shown that stop.
    ::kill(hostPid_, signalBlockedEverywhere(hostPid_, signo_) ? SIGSTOP : signo_);
    exitRequested_ = true;
  }
  thread_.join();
}

void BackgroundSampler::run() {
  samplerOfThisThread = this;
  for (;;) {
    lldb::SBError error = target_.continueSampling(process_, false);
    StopEvent event;
    if (error.Success())
      event = target_.describeStop(process_);
    else
      event.description = error.GetCString() ? error.GetCString() : "the process did not resume";

    // `strobe stop` waits for this thread while it holds the session: never block on it for good.
    std::unique_lock lock(target_.sessionMutex(), std::defer_lock);
    while (!exitRequested_ && !lock.try_lock())
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    Verdict verdict = Verdict::HandToUser;
    if (lock.owns_lock()) {
      if (Session *session = target_.armedSession())
        verdict = session->onStop(event);
      if (verdict == Verdict::Resume && !exitRequested_)
        continue;
    }

    target_.debugger().SetAsync(wasAsync_);
    if (!lock.owns_lock()) {
      // Ended from another thread, which settles once the engine is done: a sample stop stays
      // hidden until then, anything else is the user's now.
      if (event.kind == StopEvent::Kind::Signal && event.signo == signo_)
        target_.oweResume();
      else
        target_.print(target_.stopStatus());
    } else {
      // The session ended the capture at this stop and is done with it.
      target_.settle();
      if (verdict == Verdict::HandToUser)
        target_.print(target_.stopStatus());
    }
    finished_ = true;
    return;
  }
}

} // namespace strobe::lldb_plugin
