// Spec 001's patent-exact mode: the source's example machine (16 registers, 32-bit values, 16- or
// 32-bit instruction words, two memory address fields, PC in bytes) and its bit-packed record:
//   bitmap R00..R15 | IR | AS1 AS2 | IL2 IL1 IL0   (22 bits, most significant first)
//   flagged registers (32 bits each, ascending) | instruction word (its own length) if IR |
//   memory value via field 1, field 2 (32 bits each) | full PC (32 bits) if IL = 111
// IL is the PC advance as a binary number (001, 010, 100 = +1, +2, +4); 111 = full PC follows.
// It exists to test the mechanism against the spec's golden vector; production traces use the
// byte-oriented DiffEncoder.
#pragma once

#include "codec/BitStream.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace strobe {

inline constexpr unsigned kPatentRegisters = 16;
inline constexpr unsigned kPatentAddressFields = 2;
inline constexpr unsigned kPatentRecordHeaderBits = 22;

struct PatentMemoryAccess {
  uint32_t address = 0; // never stored: the decoder recomputes it
  uint32_t value = 0;

  friend bool operator==(const PatentMemoryAccess &, const PatentMemoryAccess &) = default;
};

// The machine state at one per-instruction stop.
struct PatentStop {
  std::array<uint32_t, kPatentRegisters> regs{};
  uint32_t pc = 0;        // address of the next instruction
  uint32_t word = 0;      // the instruction just executed
  unsigned wordBits = 16; // 16 or 32
  // The memory the instruction accessed through each of its two address fields.
  std::array<std::optional<PatentMemoryAccess>, kPatentAddressFields> memory;

  friend bool operator==(const PatentStop &, const PatentStop &) = default;
};

class PatentEncoder {
public:
  // The state before the first stop: PC `initialPc`, every register 0, no previous word.
  explicit PatentEncoder(uint32_t initialPc);

  // Appends the record of `stop` and returns its size in bits. Throws std::invalid_argument when
  // the word is not 16 or 32 bits long or does not fit its length.
  size_t encode(const PatentStop &stop);

  size_t bits() const { return writer_.bits(); }
  // The stream so far, zero-padded to a whole byte.
  const std::vector<uint8_t> &bytes() const { return writer_.bytes(); }

private:
  BitWriter writer_;
  std::array<uint32_t, kPatentRegisters> regs_{};
  uint32_t pc_;
  std::optional<std::pair<uint32_t, unsigned>> word_; // value and bits of the previous word
};

// What a decoder must know about the machine that the records do not say.
struct PatentMachine {
  // Length in bits of the instruction word fetched from `pc` (the ISA, or the program image).
  std::function<unsigned(uint32_t pc)> wordBitsAt;
  // The addresses the instruction's two address fields designate; the source computes them from
  // the instruction word and the registers after it ran.
  std::function<std::array<uint32_t, kPatentAddressFields>(
      uint32_t word, const std::array<uint32_t, kPatentRegisters> &regs)>
      addresses;
};

struct PatentDecoded {
  std::vector<PatentStop> stops;
  // False: the stream ended inside a record (more than 7 bits, or non-zero ones, were left after
  // the last whole record) or held an invalid code.
  bool complete = false;
};

// Decodes the first `bits` bits of `bytes` from the same initial state the encoder started from.
// The stream has no markers: a bad record ends decoding with the stops before it.
PatentDecoded decodePatentStream(std::span<const uint8_t> bytes, size_t bits,
                                 const PatentMachine &machine, uint32_t initialPc);

// Bits the source's prior-art tagged format needs for the same stops: per changed item a 3-bit
// identifier, then a 4-bit register number + 32-bit value, or the word (its own length), or a
// 32-bit address + 32-bit memory value, or a 32-bit PC; plus a 3-bit delimiter per instruction.
size_t priorArtBits(std::span<const PatentStop> stops, uint32_t initialPc);

} // namespace strobe
