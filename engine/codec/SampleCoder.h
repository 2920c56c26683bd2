// The sampled record coding (format in DiffFormat.h): registers only, each record against the
// previous one of its block, in a form vector instructions write and read without a branch per
// register. Samples are far apart, so most of their registers change in no pattern a pc history
// predicts, and coding them one tagged value at a time cost about 100 ns a record here: each
// value's length was a branch nothing predicted.
#pragma once

#include <cstdint>
#include <span>

namespace strobe {

// The state arrays are this long, zero past the layout's registers: the vector versions read and
// write whole groups of eight.
inline constexpr unsigned kSampleStateSlots = 64;
// The most bytes a record takes (and the encoder may write, past its end too): a bitmap of up to
// 8 bytes, 32 of nibbles, 8 per register, and room for a group's 64-byte store.
inline constexpr size_t kSampleRecordBound = 8 + 32 + 8 * kSampleStateSlots + 64;

// Writes the record `regs` (`count` <= 63 registers) at `out`, coded against `state`, and makes
// `state` the record; returns the end of what it wrote.
using SampleEncodeFn = uint8_t *(*)(const uint64_t *regs, uint64_t *state, unsigned count,
                                    uint8_t *out);
// Reads a record from the front of `in` into `state` (the previous record) and advances `in`;
// why the bytes are not a record, or null. Writes the registers it changes to `regs` as well, which
// the caller keeps equal to `state` (copying them after each record instead cost about a tenth of
// decoding: a copy reads the vector stores before they leave the store buffer). `state` and `regs`
// are left unspecified after a problem.
using SampleDecodeFn = const char *(*)(std::span<const uint8_t> &in, uint64_t *state,
                                       uint64_t *regs, unsigned count);

struct SampleCoder {
  SampleEncodeFn encode;
  SampleDecodeFn decode;
};

// Runs on every CPU.
uint8_t *encodeSamplePortable(const uint64_t *regs, uint64_t *state, unsigned count, uint8_t *out);
const char *decodeSamplePortable(std::span<const uint8_t> &in, uint64_t *state, uint64_t *regs,
                                 unsigned count);
#if defined(__x86_64__)
// Only where avx512SamplesRun(): AVX-512 F, CD, BW, VL, DQ, VBMI and VBMI2 (Ice Lake, Zen 4).
uint8_t *encodeSampleAvx512(const uint64_t *regs, uint64_t *state, unsigned count, uint8_t *out);
const char *decodeSampleAvx512(std::span<const uint8_t> &in, uint64_t *state, uint64_t *regs,
                               unsigned count);
bool avx512SamplesRun();
#endif

// The fastest versions this CPU runs.
SampleCoder sampleCoderForThisCpu();

} // namespace strobe
