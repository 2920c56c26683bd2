// `strobe profile --pprof`: the profile in pprof's format (formats/profile.proto, gzipped), which
// pprof, Go's tooling and the profilers that read pprof open. Every stack keeps its addresses
// and thread; strobe's own symbols name them, so no reader needs the binaries.
#pragma once

#include "analysis/Profile.h"
#include "capture/Capture.h"

#include <string>

namespace strobe {

// The gzipped protobuf of the samples `filter` accepts.
std::string pprofProfile(const Capture &capture, const Profile &profile,
                         const SampleFilter &filter);

} // namespace strobe
