#include "codec/SampleCoder.h"

#include "codec/DiffFormat.h"

#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace strobe {
namespace {

// The bitmap and payloads are copied as little-endian words: x86-64 and AArch64 Linux.
static_assert(std::endian::native == std::endian::little,
              "sampled records need byte swaps on a big-endian host");

constexpr unsigned bitmapBytes(unsigned count) { return (count + 7) / 8; }

// The bytes a nonzero payload takes.
inline unsigned payloadBytes(uint64_t payload) {
  return (71 - static_cast<unsigned>(std::countl_zero(payload))) / 8;
}

constexpr const char *kTruncated = "truncated sampled record";
constexpr const char *kPastLayout = "sampled record names a register past the layout";

} // namespace

uint8_t *encodeSamplePortable(const uint64_t *regs, uint64_t *state, unsigned count, uint8_t *out) {
  uint64_t changed = 0;
  for (unsigned s = 0; s < count; ++s)
    changed |= uint64_t{regs[s] != state[s]} << s;
  std::memcpy(out, &changed, 8);
  uint8_t *const nibbles = out + bitmapBytes(count);
  uint8_t *data = nibbles + (popcount64(changed) + 1) / 2;
  unsigned i = 0;
  for (uint64_t bits = changed; bits; bits &= bits - 1, ++i) {
    const unsigned s = static_cast<unsigned>(std::countr_zero(bits));
    const uint64_t xored = regs[s] ^ state[s];
    const uint64_t arithmetic = zigzag(static_cast<int64_t>(regs[s] - state[s]));
    const bool xorForm = xored < arithmetic;
    const uint64_t payload = xorForm ? xored : arithmetic;
    const unsigned bytes = payloadBytes(payload);
    const auto nibble = static_cast<uint8_t>((bytes - 1) << 1 | xorForm);
    if (i % 2 == 0)
      nibbles[i / 2] = nibble;
    else
      nibbles[i / 2] |= static_cast<uint8_t>(nibble << 4);
    std::memcpy(data, &payload, 8);
    data += bytes;
    state[s] = regs[s];
  }
  return data;
}

const char *decodeSamplePortable(std::span<const uint8_t> &in, uint64_t *state, uint64_t *regs,
                                 unsigned count) {
  const unsigned mapBytes = bitmapBytes(count);
  if (in.size() < mapBytes)
    return kTruncated;
  uint64_t changed = 0;
  std::memcpy(&changed, in.data(), mapBytes);
  if (changed >> count)
    return kPastLayout;
  const uint8_t *const nibbles = in.data() + mapBytes;
  const size_t nibbleBytes = (popcount64(changed) + 1) / 2;
  if (in.size() - mapBytes < nibbleBytes)
    return kTruncated;
  const uint8_t *data = nibbles + nibbleBytes;
  const uint8_t *const end = in.data() + in.size();
  unsigned i = 0;
  for (uint64_t bits = changed; bits; bits &= bits - 1, ++i) {
    const unsigned s = static_cast<unsigned>(std::countr_zero(bits));
    const unsigned nibble = (nibbles[i / 2] >> (4 * (i % 2))) & 0xf;
    const unsigned bytes = (nibble >> 1) + 1;
    if (static_cast<size_t>(end - data) < bytes)
      return kTruncated;
    uint64_t payload = 0;
    if (end - data >= 8) {
      std::memcpy(&payload, data, 8);
      payload &= ~uint64_t{0} >> (64 - 8 * bytes);
    } else {
      std::memcpy(&payload, data, bytes);
    }
    data += bytes;
    state[s] =
        nibble & 1 ? state[s] ^ payload : state[s] + static_cast<uint64_t>(unzigzag(payload));
    regs[s] = state[s];
  }
  in = in.subspan(static_cast<size_t>(data - in.data()));
  return nullptr;
}

#if defined(__x86_64__)
// Eight registers a vector. The encoder packs a group's payloads with one byte compress (each
// payload's length gives its bytes' mask), the decoder spreads them back with one byte expand; the
// nibbles of all groups are gathered or scattered by the changed bitmap in one go. No branch
// depends on the data, and the only chain from one group to the next is the data pointer. On
// this Zen 4 the demo's samples encode in 26 ns and decode in 18, framing included (built with the
// portable versions only: 42 and 35; bench/RESULTS.md).
#define STROBE_AVX512_SAMPLES                                                                      \
  gnu::target("avx512f,avx512cd,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512vbmi2,popcnt")

// GCC 12 warns about the deliberately undefined vectors inside its own AVX-512 intrinsics.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

// Bytes 0-7 in every 64-bit lane: byte b of a lane compares with the lane's length.
[[STROBE_AVX512_SAMPLES]] inline __m512i byteIndexInLane() {
  return _mm512_set1_epi64(0x0706050403020100ll);
}

// The mask of the bytes below each lane's `lengths` (0-8, in the lanes' low bytes).
[[STROBE_AVX512_SAMPLES]] inline __mmask64 bytesBelow(__m512i lengths) {
  // Each lane's low byte into all eight of its bytes (the shuffle works within 128 bits).
  const __m512i lowByte = _mm512_set4_epi64(0x0808080808080808ll, 0, 0x0808080808080808ll, 0);
  return _mm512_cmplt_epu8_mask(byteIndexInLane(), _mm512_shuffle_epi8(lengths, lowByte));
}

[[STROBE_AVX512_SAMPLES]] inline __mmask8 liveLanes(unsigned count, unsigned group) {
  const unsigned left = count - 8 * group;
  return static_cast<__mmask8>(left >= 8 ? 0xff : (1u << left) - 1);
}

} // namespace

[[STROBE_AVX512_SAMPLES]] uint8_t *encodeSampleAvx512(const uint64_t *regs, uint64_t *state,
                                                      unsigned count, uint8_t *out) {
  const unsigned groups = (count + 7) / 8;
  // The bitmap first: the payloads go after the nibbles, whose number it gives.
  uint64_t changed = 0;
  for (unsigned g = 0; g < groups; ++g) {
    const __m512i now = _mm512_maskz_loadu_epi64(liveLanes(count, g), regs + 8 * g);
    changed |= uint64_t{_mm512_cmpneq_epu64_mask(now, _mm512_loadu_si512(state + 8 * g))}
               << (8 * g);
  }
  std::memcpy(out, &changed, 8);
  uint8_t *const nibbles = out + bitmapBytes(count);
  const unsigned nibbleBytes = (static_cast<unsigned>(std::popcount(changed)) + 1) / 2;
  uint8_t *data = nibbles + nibbleBytes;
  __m512i slotNibbles = _mm512_setzero_si512(); // byte s: register s's nibble
  for (unsigned g = 0; g < groups; ++g) {
    const __m512i now = _mm512_maskz_loadu_epi64(liveLanes(count, g), regs + 8 * g);
    const __m512i before = _mm512_loadu_si512(state + 8 * g);
    _mm512_storeu_si512(state + 8 * g, now);
    const __m512i xored = _mm512_xor_si512(now, before);
    const __m512i delta = _mm512_sub_epi64(now, before);
    const __m512i arithmetic =
        _mm512_xor_si512(_mm512_slli_epi64(delta, 1), _mm512_srai_epi64(delta, 63));
    const __mmask8 xorForm = _mm512_cmplt_epu64_mask(xored, arithmetic);
    const __m512i payload = _mm512_mask_blend_epi64(xorForm, arithmetic, xored);
    // (71 - leading zeros) / 8: the payload's bytes, 0 for an unchanged register.
    const __m512i bytes =
        _mm512_srli_epi64(_mm512_sub_epi64(_mm512_set1_epi64(71), _mm512_lzcnt_epi64(payload)), 3);
    const __m512i nibble =
        _mm512_or_si512(_mm512_slli_epi64(_mm512_sub_epi64(bytes, _mm512_set1_epi64(1)), 1),
                        _mm512_maskz_set1_epi64(xorForm, 1));
    slotNibbles = _mm512_mask_broadcastq_epi64(slotNibbles, static_cast<__mmask8>(1u << g),
                                               _mm512_cvtepi64_epi8(nibble));
    const __mmask64 kept = bytesBelow(bytes);
    _mm512_storeu_si512(data, _mm512_maskz_compress_epi8(kept, payload));
    data += std::popcount(kept);
  }
  // The changed registers' nibbles in order, then two a byte: (even | odd << 4) in each 16 bits.
  const __m512i ordered = _mm512_maskz_compress_epi8(changed, slotNibbles);
  const __m512i paired = _mm512_or_si512(_mm512_and_si512(ordered, _mm512_set1_epi16(0x0f)),
                                         _mm512_srli_epi16(ordered, 4));
  _mm256_mask_storeu_epi8(nibbles, static_cast<__mmask32>((uint64_t{1} << nibbleBytes) - 1),
                          _mm512_cvtepi16_epi8(paired));
  return data;
}

[[STROBE_AVX512_SAMPLES]] const char *
decodeSampleAvx512(std::span<const uint8_t> &in, uint64_t *state, uint64_t *regs, unsigned count) {
  // Near the end of a block the wide loads would read past it.
  if (in.size() < kSampleRecordBound)
    return decodeSamplePortable(in, state, regs, count);
  const unsigned mapBytes = bitmapBytes(count);
  uint64_t changed;
  std::memcpy(&changed, in.data(), 8);
  changed &= ~uint64_t{0} >> (64 - 8 * mapBytes);
  if (changed >> count)
    return kPastLayout;
  const uint8_t *const nibbles = in.data() + mapBytes;
  // Byte 2i the low nibble of byte i, byte 2i + 1 its high one; then byte s register s's.
  const __m512i wide =
      _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(nibbles)));
  const __m512i split = _mm512_or_si512(_mm512_and_si512(wide, _mm512_set1_epi16(0x0f)),
                                        _mm512_slli_epi16(_mm512_srli_epi16(wide, 4), 8));
  const __m512i slotNibbles = _mm512_maskz_expand_epi8(changed, split);
  const __m512i slotBytes = _mm512_maskz_add_epi8(
      changed, _mm512_and_si512(_mm512_srli_epi16(slotNibbles, 1), _mm512_set1_epi8(0x7f)),
      _mm512_set1_epi8(1));
  const uint64_t xorForm = _mm512_test_epi8_mask(slotNibbles, _mm512_set1_epi8(1));
  const uint8_t *data = nibbles + (std::popcount(changed) + 1) / 2;
  // Lane k of group g takes byte 8g + k of slotBytes.
  const __m512i laneIndex = _mm512_set_epi64(
      0x0707070707070707ll, 0x0606060606060606ll, 0x0505050505050505ll, 0x0404040404040404ll,
      0x0303030303030303ll, 0x0202020202020202ll, 0x0101010101010101ll, 0);
  const unsigned groups = (count + 7) / 8;
  for (unsigned g = 0; g < groups; ++g) {
    const __m512i bytes = _mm512_permutexvar_epi8(
        _mm512_add_epi8(laneIndex, _mm512_set1_epi8(static_cast<char>(8 * g))), slotBytes);
    const __mmask64 kept = _mm512_cmplt_epu8_mask(byteIndexInLane(), bytes);
    const __m512i payload = _mm512_maskz_expand_epi8(kept, _mm512_loadu_si512(data));
    data += std::popcount(kept);
    const __m512i before = _mm512_loadu_si512(state + 8 * g);
    const __m512i unzigzagged = _mm512_xor_si512(
        _mm512_srli_epi64(payload, 1),
        _mm512_sub_epi64(_mm512_setzero_si512(), _mm512_and_si512(payload, _mm512_set1_epi64(1))));
    const __m512i now = _mm512_mask_blend_epi64(static_cast<__mmask8>(xorForm >> (8 * g)),
                                                _mm512_add_epi64(before, unzigzagged),
                                                _mm512_xor_si512(before, payload));
    _mm512_storeu_si512(state + 8 * g, now);
    _mm512_mask_storeu_epi64(regs + 8 * g, liveLanes(count, g), now);
  }
  in = in.subspan(static_cast<size_t>(data - in.data()));
  return nullptr;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

bool avx512SamplesRun() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vbmi") &&
         __builtin_cpu_supports("avx512vbmi2");
}
#endif

SampleCoder sampleCoderForThisCpu() {
#if defined(__x86_64__)
  if (avx512SamplesRun())
    return {encodeSampleAvx512, decodeSampleAvx512};
#endif
  return {encodeSamplePortable, decodeSamplePortable};
}

} // namespace strobe
