// `strobe dump`: the records of a capture, decoded, for people (one line per record: index, the
// instruction executed with its address, the registers it changed, the memory it accessed) or as
// Tenet trace text (TenetText.h). Step traces come first, then the samples (one record each),
// which a dump of step traces leaves out when there are none.
#pragma once

#include "capture/Capture.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace strobe {

enum class DumpFormat { Text, Tenet };

struct DumpOptions {
  DumpFormat format = DumpFormat::Text;
  std::optional<uint64_t> tid; // only this thread
  bool steps = true;           // the step traces
  bool samples = true;         // the periodic samples
};

// Takes text in pieces, in order.
using TextSink = std::function<void(std::string_view)>;

// The dump, handed to `sink` a piece of about a megabyte at a time: a long step trace's text
// (about 110 bytes an instruction) is never held whole.
void writeDump(const Capture &capture, const DumpOptions &options, const TextSink &sink);

// One step trace as text, e.g. right after `strobe step`. Record 0 is the state stepping
// started from; record i > 0 is the state after the instruction at record i-1's pc ran.
std::string renderStepTrace(const Capture &capture, const StepTrace &trace);

} // namespace strobe
