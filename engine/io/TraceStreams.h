// How the trace file uses the diff-record codec: the same choices for the writer and the reader.
#pragma once

#include "codec/DiffEncoder.h"

#include <string_view>

namespace strobe {

inline constexpr std::string_view kRegisterCodecName = "diff";
// The memory operand model of step traces: engine/isa's InstructionDecoder. Bump the version when
// the slots it computes for some instruction change, or old files decode to wrong addresses.
inline constexpr std::string_view kMemoryModelName = "strobe-isa-1";

// Samples jump around: no prediction table, and the coding made for them (SampleCoder.h).
inline constexpr EncoderOptions kSampleOptions{4096, 0, 1, RecordCoding::Sampled};
// Single steps loop: a large table pays off.
inline constexpr EncoderOptions kStepOptions{8192, 12, 1};
// Records per StepTraceChunk: one block of the stream (prediction restarts with each block
// anyway, so smaller chunks cost only their framing, about 50 bytes), and a damaged or cut-short
// chunk loses no more than that.
inline constexpr size_t kStepChunkRecords = kStepOptions.keyframeInterval;

} // namespace strobe
