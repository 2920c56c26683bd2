// `strobe annotate`: one function's samples per instruction (Capstone disassembly of the code the
// capture stored) and per source line (spec 002, listings 65 and 71).
#pragma once

#include "analysis/Profile.h"
#include "capture/Capture.h"

#include <stdexcept>
#include <string>

namespace strobe {

// A report that cannot be produced as asked; the message is one line for the user.
struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct AnnotateOptions {
  std::string function; // exact name, else a substring matching exactly one function
  bool assembly = true;
  bool source = false;
  bool onCpuOnly = false;
};

// Throws ReportError when the name matches no function or several.
std::string renderAnnotate(const Capture &capture, const AnnotateOptions &options);
std::string renderAnnotate(const Capture &capture, const Profile &profile,
                           const AnnotateOptions &options);

} // namespace strobe
