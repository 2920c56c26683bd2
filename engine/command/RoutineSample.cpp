#include "command/RoutineSample.h"

#include "command/Session.h"

namespace strobe {

bool RoutineSample::offer(Session &session, int signo) {
  active_ = true;
  bool taken =
      session.takeRoutineSample({StopEvent::Kind::Signal, snapshot_.tid, signo, 0, "sample stop"});
  active_ = false;
  return taken;
}

} // namespace strobe
