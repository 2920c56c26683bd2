// One strobe instance inside one debugger: parses and runs every `strobe ...` command and decides,
// at each stop while sampling is armed, whether the stop was strobe's own.
#pragma once

#include "capture/Capture.h"
#include "target/Target.h"

#include <memory>
#include <string>
#include <string_view>

namespace strobe {

class Sampler;

class Session {
public:
  // `target` may be null (strobe-report: offline reports only).
  explicit Session(Target *target, std::string debuggerName);
  ~Session();

  // Runs one `strobe` command line (without the word "strobe"). Output and errors go to `out`;
  // returns false when the command failed (the text then holds a one-line "error: ..." message).
  bool execute(std::string_view args, std::string &out);

  // Called by the front-end for every stop while armed (see Target::arm), on the debugger's thread.
  Verdict onStop(const StopEvent &event);
  // For a front-end that can sample a stop inside the debugger's private handling of it, before
  // the debugger decides whether the stop is public (LLDB: from lldb-server's stop reply; GDB:
  // inside its waitpid()), where nothing but the stopped thread's registers and memory can be read
  // (see RoutineSample). Takes the sample and returns true when the stop is a sample stop that
  // changes nothing else: the debugger then resumes it silently. Returns false, having done
  // nothing, for any other stop, which must be made public and go through onStop(). Holds the
  // same thread rules as onStop().
  bool takeRoutineSample(const StopEvent &event);

  // Called by a front-end whose user can delete strobe's breakpoints (LLDB) right before it
  // resumes the process for the user, while armed: plants them again, and says so.
  void beforeUserResume();

  // Ends a running capture, which is kept, as `strobe stop` does, giving `reason` (for a
  // front-end that must end it before one of the debugger's own commands); false when none runs.
  bool endCapture(const std::string &reason, std::string &out);

  // The signal strobe stops the inferior with: a real-time signal programs rarely use, except
  // under an emulator (see the definition).
  static int sampleSignal(bool emulated = false);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace strobe
