// Ctrl-C while a `strobe` command holds the process (record, step, loop --verify). LLDB hands a
// Ctrl-C to the top of its input stack, and while a command resumes the process synchronously
// that is the process's stdin forwarder, which only queues the interrupt for when it next reads
// input: the command never hears of it. So for the command's length strobe catches SIGINT
// itself and the command ends at its next stop, keeping what it took.
#pragma once

#include <csignal>

namespace strobe::lldb_plugin {

class InterruptWatch {
public:
  InterruptWatch();
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch &) = delete;
  InterruptWatch &operator=(const InterruptWatch &) = delete;

  // Whether Ctrl-C came since the outermost watch began; false when none is active.
  static bool requested();

private:
  bool installed_ = false; // this watch replaced the handler (an inner one leaves it alone)
  struct sigaction previous_ {};
};

} // namespace strobe::lldb_plugin
