// The trace file (layout in formats/strobe.proto): one writer that streams a capture while it runs,
// one reader that loads whatever a finished, crashed or damaged file still holds.
#pragma once

#include "capture/Capture.h"

#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strobe {

// A file that cannot be written or loaded at all; the message is one line naming the file.
class TraceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::string_view kTraceMagic{"STROBE\0", 7}; // followed by the format version
inline constexpr uint8_t kTraceFormatVersion = 1;

class TraceWriter {
public:
  // Creates or truncates `path` and writes the magic; throws TraceError with the errno text.
  explicit TraceWriter(const std::string &path);
  // Writes what it still can and closes without reporting failures; close() reports them.
  ~TraceWriter();
  TraceWriter(const TraceWriter &) = delete;
  TraceWriter &operator=(const TraceWriter &) = delete;

  // Must come first, once.
  void writeHeader(const CaptureHeader &header);
  // Samples of any threads, in any number of calls. Each thread's samples are encoded into its own
  // SampleBatch, which is written once it is large enough (or at flush/writeEnd); each sample has
  // no registers or the header ISA's full table (else std::invalid_argument).
  void writeSamples(std::span<const Sample> samples);
  void writeThreads(std::span<const ThreadInfo> threads);
  // The capture's modules and symbols that no call wrote yet, so that a capture that never ends
  // (its debugger killed) still names what it sampled. The capture must be the same each time.
  void writeNames(const Capture &capture);
  // Writes the pending batches, then the capture's modules and symbols (writeNames), code,
  // instruction lines, threads and the End chunk. Nothing may be written after it.
  void writeEnd(const Capture &capture);
  // Writes every pending batch and hands the bytes to the kernel: a crash after this loses nothing.
  void flush();
  // flush(), fsync and close.
  void close();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes the whole capture to `path` + ".tmp" and renames it over `path`, so a failed save never
// clobbers an existing file. Throws TraceError.
void saveCapture(const std::string &path, const Capture &capture);

struct LoadedTrace {
  Capture capture; // samples ordered by time, then thread id
  std::vector<std::string> warnings;
};

// Throws TraceError when the file cannot be read, is not a strobe trace, has an unsupported format
// version or codec, or has no readable header. A corrupt chunk is skipped (the load goes on with
// the next whole chunk) and a cut-short one ends the load; a warning says what was lost.
LoadedTrace loadCapture(const std::string &path);

} // namespace strobe
