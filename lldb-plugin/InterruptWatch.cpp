#include "InterruptWatch.h"

#include <atomic>

namespace strobe::lldb_plugin {
namespace {

// Lock-free, so the handler may set it.
std::atomic<bool> interrupted{false};
std::atomic<bool> watching{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void onInterrupt(int) { interrupted = true; }

} // namespace

InterruptWatch::InterruptWatch() {
  if (watching.exchange(true))
    return;
  interrupted = false;
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  action.sa_flags = SA_RESTART; // as LLDB's own handler: its blocking calls must not see EINTR
  sigemptyset(&action.sa_mask);
  installed_ = sigaction(SIGINT, &action, &previous_) == 0;
  if (!installed_)
    watching = false;
}

InterruptWatch::~InterruptWatch() {
  if (!installed_)
    return;
  sigaction(SIGINT, &previous_, nullptr);
  watching = false;
}

bool InterruptWatch::requested() { return watching && interrupted; }

} // namespace strobe::lldb_plugin
