#include "codec/PatentCodec.h"

#include <stdexcept>

namespace strobe {
namespace {

constexpr unsigned kValueBits = 32;
constexpr uint64_t kFullPcCode = 0b111;

// The IL code for an advance of `delta` bytes, or the full-PC code.
uint64_t pcCode(uint32_t delta) {
  switch (delta) {
  case 1:
  case 2:
  case 4:
    return delta;
  default:
    return kFullPcCode;
  }
}

bool validWord(uint32_t word, unsigned bits) {
  return bits == 32 || (bits == 16 && word <= 0xffff);
}

} // namespace

PatentEncoder::PatentEncoder(uint32_t initialPc) : pc_(initialPc) {}

size_t PatentEncoder::encode(const PatentStop &stop) {
  if (!validWord(stop.word, stop.wordBits))
    throw std::invalid_argument("a patent-mode instruction word is 16 or 32 bits long");
  const size_t start = writer_.bits();
  const bool wordChanged = !word_ || *word_ != std::pair(stop.word, stop.wordBits);
  const uint64_t il = pcCode(stop.pc - pc_);

  uint64_t bitmap = 0;
  for (unsigned r = 0; r < kPatentRegisters; ++r)
    bitmap = bitmap << 1 | (stop.regs[r] != regs_[r]);
  bitmap = bitmap << 1 | wordChanged;
  for (const auto &access : stop.memory)
    bitmap = bitmap << 1 | access.has_value();
  bitmap = bitmap << 3 | il;
  writer_.put(bitmap, kPatentRecordHeaderBits);

  for (unsigned r = 0; r < kPatentRegisters; ++r)
    if (stop.regs[r] != regs_[r])
      writer_.put(stop.regs[r], kValueBits);
  if (wordChanged)
    writer_.put(stop.word, stop.wordBits);
  for (const auto &access : stop.memory)
    if (access)
      writer_.put(access->value, kValueBits);
  if (il == kFullPcCode)
    writer_.put(stop.pc, kValueBits);

  regs_ = stop.regs;
  pc_ = stop.pc;
  word_ = std::pair(stop.word, stop.wordBits);
  return writer_.bits() - start;
}

PatentDecoded decodePatentStream(std::span<const uint8_t> bytes, size_t bits,
                                 const PatentMachine &machine, uint32_t initialPc) {
  PatentDecoded out;
  BitReader in(bytes, bits);
  PatentStop state;
  state.pc = initialPc;
  bool haveWord = false;
  while (in.remaining() >= kPatentRecordHeaderBits) {
    uint64_t bitmap = 0, value = 0;
    in.get(kPatentRecordHeaderBits, bitmap);
    const uint64_t il = bitmap & 7;
    const bool fullPc = il == kFullPcCode;
    if (!fullPc && il != 1 && il != 2 && il != 4)
      return out;
    const bool wordChanged = (bitmap >> 5) & 1;
    if (!wordChanged && !haveWord)
      return out;

    PatentStop stop = state;
    for (unsigned r = 0; r < kPatentRegisters; ++r) {
      if ((bitmap >> (kPatentRecordHeaderBits - 1 - r)) & 1) {
        if (!in.get(kValueBits, value))
          return out;
        stop.regs[r] = static_cast<uint32_t>(value);
      }
    }
    if (wordChanged) {
      const unsigned wordBits = machine.wordBitsAt(state.pc);
      if ((wordBits != 16 && wordBits != 32) || !in.get(wordBits, value))
        return out;
      stop.word = static_cast<uint32_t>(value);
      stop.wordBits = wordBits;
    }
    std::array<bool, kPatentAddressFields> accessed{};
    for (unsigned f = 0; f < kPatentAddressFields; ++f) {
      accessed[f] = (bitmap >> (4 - f)) & 1;
      stop.memory[f].reset();
      if (accessed[f]) {
        if (!in.get(kValueBits, value))
          return out;
        stop.memory[f] = PatentMemoryAccess{0, static_cast<uint32_t>(value)};
      }
    }
    if (fullPc) {
      if (!in.get(kValueBits, value))
        return out;
      stop.pc = static_cast<uint32_t>(value);
    } else {
      stop.pc = state.pc + static_cast<uint32_t>(il);
    }
    if (accessed[0] || accessed[1]) {
      const auto addresses = machine.addresses(stop.word, stop.regs);
      for (unsigned f = 0; f < kPatentAddressFields; ++f)
        if (stop.memory[f])
          stop.memory[f]->address = addresses[f];
    }
    out.stops.push_back(stop);
    state = stop;
    haveWord = true;
  }
  // What is left can only be the zero padding of the last byte.
  uint64_t padding = 0;
  out.complete =
      in.remaining() < 8 && in.get(static_cast<unsigned>(in.remaining()), padding) && padding == 0;
  return out;
}

size_t priorArtBits(std::span<const PatentStop> stops, uint32_t initialPc) {
  constexpr size_t kIdentifier = 3, kRegisterNumber = 4, kAddress = 32, kDelimiter = 3;
  size_t bits = 0;
  PatentStop previous;
  previous.pc = initialPc;
  bool haveWord = false;
  for (const PatentStop &stop : stops) {
    for (unsigned r = 0; r < kPatentRegisters; ++r)
      if (stop.regs[r] != previous.regs[r])
        bits += kIdentifier + kRegisterNumber + kValueBits;
    if (!haveWord || stop.word != previous.word || stop.wordBits != previous.wordBits)
      bits += kIdentifier + stop.wordBits;
    for (const auto &access : stop.memory)
      if (access)
        bits += kIdentifier + kAddress + kValueBits;
    if (stop.pc != previous.pc)
      bits += kIdentifier + kValueBits;
    bits += kDelimiter;
    previous = stop;
    haveWord = true;
  }
  return bits;
}

} // namespace strobe
