#include "codec/RecordCoder.h"

#include "codec/Varint.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace strobe {
namespace {

constexpr unsigned kMaxSourceBytes = 16;

// A value of 1..16 bytes as two little-endian words and the masks of their valid bytes.
struct Packed {
  uint64_t low = 0, high = 0, lowMask = 0, highMask = 0;
};

Packed pack(std::span<const uint8_t> value) {
  Packed p;
  for (size_t k = 0; k < value.size(); ++k) {
    const unsigned shift = static_cast<unsigned>(8 * (k % 8));
    (k < 8 ? p.low : p.high) |= uint64_t{value[k]} << shift;
    (k < 8 ? p.lowMask : p.highMask) |= uint64_t{0xff} << shift;
  }
  return p;
}

// How many slots a value of `size` bytes spans.
unsigned slotsSpanned(size_t size) { return static_cast<unsigned>((size + 7) / 8); }

// The first slot from which `slots` hold `value` (little-endian), if any.
std::optional<unsigned> findInSlots(const Packed &p, unsigned span,
                                    std::span<const uint64_t> slots) {
  if (span > slots.size())
    return std::nullopt;
  for (unsigned r = 0; r + span <= slots.size(); ++r)
    if ((slots[r] & p.lowMask) == p.low && (span == 1 || (slots[r + 1] & p.highMask) == p.high))
      return r;
  return std::nullopt;
}

SlotMask shiftedDown(const SlotMask &mask, unsigned by) {
  SlotMask out;
  mask.forEach([&](unsigned slot) {
    if (slot >= by)
      out.set(slot - by);
  });
  return out;
}

// What the history of a record's pcBefore predicts.
struct Prediction {
  const History *history;

  SlotMask changed() const { return history ? history->changed : SlotMask{}; }
  // The delta of the k-th member of changed().
  uint64_t delta(unsigned k) const {
    return history && k < history->deltaCount ? history->deltas[k] : 0;
  }
  // The delta of `slot`, a member of changed() or not.
  uint64_t deltaOf(unsigned slot) const {
    return history && history->changed.test(slot) ? delta(history->changed.rank(slot)) : 0;
  }
  // The instruction bytes a record at this pc need not repeat; nullopt: too long to remember.
  std::optional<std::span<const uint8_t>> instruction() const {
    if (!history)
      return std::span<const uint8_t>{};
    if (history->instructionLength == History::kUnknownInstruction)
      return std::nullopt;
    return std::span<const uint8_t>(history->instruction.data(), history->instructionLength);
  }
};

} // namespace

CoderState::CoderState(const StreamHeader &header, MemoryOperandModel *model)
    : header_(header), slots_(header.layout.slots()), mainCount_(header.layout.mainCount),
      pc_(header.layout.pcIndex), model_(model), state_(slots_),
      history_(size_t{1} << std::min(header.historyBits, kMaxHistoryBits)) {}

void CoderState::beginBlock() {
  inBlock_ = false;
  lastEscape_ = 0;
  if (++generation_ == 0) { // after 2^32 blocks: forget the table for real
    std::fill(history_.begin(), history_.end(), History{});
    generation_ = 1;
  }
}

const History *CoderState::lookup(uint64_t pc) const {
  const History &h = history_[historyIndex(pc, header_.historyBits)];
  return h.generation == generation_ && h.pc == pc ? &h : nullptr;
}

void CoderState::remember(uint64_t pcBefore, uint64_t nextPc, const Changes &changes,
                          std::span<const uint8_t> instruction) {
  History &h = history_[historyIndex(pcBefore, header_.historyBits)];
  h.pc = pcBefore;
  h.nextPc = nextPc;
  h.generation = generation_;
  h.changed = changes.slots;
  h.deltaCount = changes.deltaCount;
  h.deltas = changes.deltas;
  if (instruction.size() <= h.instruction.size()) {
    std::copy(instruction.begin(), instruction.end(), h.instruction.begin());
    h.instructionLength = static_cast<uint8_t>(instruction.size());
  } else {
    h.instructionLength = History::kUnknownInstruction;
  }
}

std::vector<MemorySlot> CoderState::modelSlots(std::span<const uint8_t> instruction,
                                               uint64_t pcBefore) {
  if (!model_)
    return {};
  std::optional<std::vector<MemorySlot>> slots = model_->slots(instruction, pcBefore, before_);
  if (!slots || slots->size() > kMaxModelSlots)
    return {};
  return std::move(*slots);
}

// --- encoder ---

RecordEncoder::RecordEncoder(const StreamHeader &header, MemoryOperandModel *model)
    : CoderState(header, model) {
  const StreamLayout &layout = header.layout;
  if (layout.mainCount == 0 || layout.mainCount > kMaxMainSlots ||
      layout.pcIndex >= layout.mainCount || layout.slots() > kMaxSlots ||
      header.historyBits > kMaxHistoryBits || header.keyframeInterval == 0 ||
      header.keyframeInterval > kMaxKeyframeInterval || header.memoryModel.size() > kMaxModelName)
    throw std::invalid_argument("unusable diff-record stream header");
}

void RecordEncoder::validate(const TraceRecord &record) const {
  const StreamLayout &layout = header_.layout;
  auto fail = [](const std::string &what) { throw std::invalid_argument("trace record: " + what); };
  if (record.regs.size() != layout.mainCount)
    fail(std::to_string(record.regs.size()) + " registers, expected " +
         std::to_string(layout.mainCount));
  if (record.ext.size() != layout.extSlots)
    fail(std::to_string(record.ext.size()) + " extended slots, expected " +
         std::to_string(layout.extSlots));
  if (record.instruction.size() > kMaxInstructionBytes)
    fail("instruction of " + std::to_string(record.instruction.size()) + " bytes");
  if (record.memory.size() > kMaxAccesses)
    fail(std::to_string(record.memory.size()) + " memory accesses");
  size_t memoryBytes = 0;
  for (const MemoryAccess &a : record.memory) {
    if (a.size == 0 || a.size > kMaxAccessBytes || !(a.read || a.write) ||
        a.readValue.size() != (a.read ? a.size : 0) ||
        a.writtenValue.size() != (a.write ? a.size : 0))
      fail("inconsistent memory access");
    memoryBytes += a.readValue.size() + a.writtenValue.size();
  }
  if (memoryBytes > kMaxRecordMemoryBytes)
    fail(std::to_string(memoryBytes) + " bytes of memory values");
}

void RecordEncoder::encode(const TraceRecord &record, std::vector<uint8_t> &out) {
  validate(record);
  if (inBlock_)
    encodeDelta(record, out);
  else
    encodeKeyframe(record, out);
  inBlock_ = true;
}

void RecordEncoder::encodeKeyframe(const TraceRecord &record, std::vector<uint8_t> &out) {
  std::copy(record.regs.begin(), record.regs.end(), state_.begin());
  std::copy(record.ext.begin(), record.ext.end(), state_.begin() + mainCount_);
  putVarint(state_[pc_], out);
  for (unsigned slot = 0; slot < slots_; ++slot)
    if (slot != pc_)
      putVarint(state_[slot], out);
  putVarint(record.instruction.size(), out);
  out.insert(out.end(), record.instruction.begin(), record.instruction.end());
  putVarint(record.memory.size(), out);
  for (const MemoryAccess &access : record.memory)
    encodeEscape(access, true, out);
}

// Branch-free bit gathering (which slots change is data a branch predictor cannot learn), and
// the extended state, which rarely changes, skipped with one comparison when it did not.
SlotMask RecordEncoder::changedSlots(const TraceRecord &record) const {
  SlotMask changed;
  uint64_t bits = 0;
  for (unsigned slot = 0; slot < mainCount_; ++slot)
    bits |= uint64_t{record.regs[slot] != state_[slot]} << slot;
  changed.words[0] = bits & ~(uint64_t{1} << pc_);
  const uint64_t *ext = state_.data() + mainCount_;
  if (record.ext.empty() ||
      std::memcmp(record.ext.data(), ext, record.ext.size() * sizeof(uint64_t)) == 0)
    return changed;
  for (unsigned word = 0; word < 2; ++word) {
    const unsigned first = std::max(mainCount_, word * 64), end = std::min(slots_, word * 64 + 64);
    bits = 0;
    for (unsigned slot = first; slot < end; ++slot)
      bits |= uint64_t{record.ext[slot - mainCount_] != state_[slot]} << (slot % 64);
    changed.words[word] |= bits;
  }
  return changed;
}

void RecordEncoder::encodeDelta(const TraceRecord &record, std::vector<uint8_t> &out) {
  const uint64_t pcBefore = state_[pc_];
  const Prediction predict{lookup(pcBefore)};
  const std::span<const uint8_t> instruction = record.instruction;
  const auto remembered = predict.instruction();
  const bool sendInstruction = !remembered || !std::equal(remembered->begin(), remembered->end(),
                                                          instruction.begin(), instruction.end());

  const uint64_t pc = record.regs[pc_];
  const uint64_t fallThrough = pcBefore + instruction.size();
  const uint64_t predictedPc = predict.history ? predict.history->nextPc : fallThrough;
  const uint8_t pcCode = pc == predictedPc   ? kPcPredicted
                         : pc == fallThrough ? kPcFallThrough
                         : pc == pcBefore    ? kPcUnchanged
                                             : kPcDelta;

  auto valueOf = [&](unsigned slot) {
    return slot < mainCount_ ? record.regs[slot] : record.ext[slot - mainCount_];
  };
  const SlotMask changed = changedSlots(record);
  const SlotMask expected = predict.changed();
  SlotMask deviations; // positions within `expected`
  uint8_t regCode;
  if (changed == expected) {
    unsigned k = 0;
    expected.forEach([&](unsigned slot) {
      if (valueOf(slot) != state_[slot] + predict.delta(k))
        deviations.set(k);
      ++k;
    });
    regCode = deviations.empty() ? kRegsPredicted : kRegsDeviate;
  } else {
    regCode = changed.empty() ? kRegsNone : kRegsExplicit;
  }

  std::vector<MemorySlot> memorySlots;
  if (!record.memory.empty()) {
    before_ = state_;
    memorySlots = modelSlots(instruction, pcBefore);
  }

  const bool allDeviate = regCode == kRegsDeviate && deviations.count() == expected.count();
  out.push_back(static_cast<uint8_t>(
      pcCode | regCode << kRegShift | (sendInstruction ? kInstructionFollows : 0) |
      (record.memory.empty() ? 0 : kMemoryFollows) | (allDeviate ? kAllDeviate : 0)));
  if (sendInstruction) {
    putVarint(instruction.size(), out);
    out.insert(out.end(), instruction.begin(), instruction.end());
  }
  if (pcCode == kPcDelta)
    putVarint(zigzag(static_cast<int64_t>(pc - pcBefore)), out);

  Changes changes;
  auto update = [&](unsigned slot) {
    const uint64_t value = valueOf(slot);
    changes.add(slot, value - state_[slot]);
    state_[slot] = value;
  };
  auto putValue = [&](unsigned slot, uint64_t predicted) {
    const uint64_t value = valueOf(slot);
    const uint64_t arithmetic = zigzag(static_cast<int64_t>(value - predicted));
    const uint64_t xored = value ^ state_[slot];
    if (taggedSize(xored) < taggedSize(arithmetic))
      putTagged(xored, true, out);
    else
      putTagged(arithmetic, false, out);
    update(slot);
  };
  switch (regCode) {
  case kRegsPredicted:
    expected.forEach(update);
    break;
  case kRegsDeviate: {
    if (!allDeviate)
      putWideVarint(deviations, out);
    unsigned k = 0;
    expected.forEach([&](unsigned slot) {
      if (deviations.test(k))
        putValue(slot, state_[slot] + predict.delta(k));
      else
        update(slot);
      ++k;
    });
    break;
  }
  case kRegsExplicit: {
    const SlotMask ext = shiftedDown(changed, mainCount_);
    const uint64_t mainBits = changed.words[0] & ((uint64_t{1} << mainCount_) - 1);
    putVarint(mainBits | uint64_t{!ext.empty()} << mainCount_, out);
    if (!ext.empty())
      putWideVarint(ext, out);
    changed.forEach([&](unsigned slot) { putValue(slot, state_[slot] + predict.deltaOf(slot)); });
    break;
  }
  default:
    break;
  }
  state_[pc_] = pc;

  if (!record.memory.empty())
    encodeMemory(record, memorySlots, out);
  // A record exactly as its history predicted would rewrite that history unchanged.
  if (!predict.history || pcCode != kPcPredicted || regCode != kRegsPredicted || sendInstruction)
    remember(pcBefore, pc, changes, instruction);
}

void RecordEncoder::encodeMemory(const TraceRecord &record, const std::vector<MemorySlot> &slots,
                                 std::vector<uint8_t> &out) {
  // The longest prefix of the accesses that the model's slots predict, in slot order.
  uint64_t bitmap = 0;
  size_t matched = 0;
  for (size_t slot = 0; slot < slots.size() && matched < record.memory.size(); ++slot) {
    const MemorySlot &s = slots[slot];
    const MemoryAccess &a = record.memory[matched];
    if (s.address == a.address && s.size == a.size && s.read == a.read && s.write == a.write) {
      bitmap |= uint64_t{1} << slot;
      ++matched;
    }
  }
  const size_t escapes = record.memory.size() - matched;
  putVarint(bitmap << 1 | (escapes ? 1 : 0), out);
  for (size_t i = 0; i < matched; ++i) {
    const MemoryAccess &a = record.memory[i];
    if (a.read)
      encodeValue(a.readValue, false, out);
    if (a.write)
      encodeValue(a.writtenValue, false, out);
  }
  if (escapes) {
    putVarint(escapes, out);
    for (size_t i = matched; i < record.memory.size(); ++i)
      encodeEscape(record.memory[i], false, out);
  }
}

void RecordEncoder::encodeEscape(const MemoryAccess &access, bool keyframe,
                                 std::vector<uint8_t> &out) {
  putVarint(zigzag(static_cast<int64_t>(access.address - lastEscape_)), out);
  lastEscape_ = access.address;
  putVarint(access.size, out);
  out.push_back(
      static_cast<uint8_t>((access.read ? kAccessRead : 0) | (access.write ? kAccessWrite : 0)));
  if (access.read)
    encodeValue(access.readValue, keyframe, out);
  if (access.write)
    encodeValue(access.writtenValue, keyframe, out);
}

void RecordEncoder::encodeValue(std::span<const uint8_t> value, bool keyframe,
                                std::vector<uint8_t> &out) {
  if (value.size() <= kMaxSourceBytes) {
    const Packed packed = pack(value);
    const unsigned span = slotsSpanned(value.size());
    if (auto slot = findInSlots(packed, span, state_)) {
      putVarint(1 + *slot, out);
      return;
    }
    if (!keyframe)
      if (auto slot = findInSlots(packed, span, before_)) {
        putVarint(1 + slots_ + *slot, out);
        return;
      }
  }
  out.push_back(0);
  out.insert(out.end(), value.begin(), value.end());
}

// --- decoder ---

RecordDecoder::RecordDecoder(const StreamHeader &header, MemoryOperandModel *model)
    : CoderState(header, model) {
  record_.regs.resize(mainCount_);
  record_.ext.resize(slots_ - mainCount_);
}

std::optional<std::string> RecordDecoder::decode(std::span<const uint8_t> &in) {
  record_.gap = false;
  record_.memory.clear();
  auto problem = inBlock_ ? decodeDelta(in) : decodeKeyframe(in);
  if (!problem)
    inBlock_ = true;
  return problem;
}

void RecordDecoder::setSlot(unsigned slot, uint64_t value) {
  state_[slot] = value;
  if (slot < mainCount_)
    record_.regs[slot] = value;
  else
    record_.ext[slot - mainCount_] = value;
}

namespace {

bool getBytes(std::span<const uint8_t> &in, size_t size, std::vector<uint8_t> &out) {
  if (size > in.size())
    return false;
  out.assign(in.begin(), in.begin() + static_cast<ptrdiff_t>(size));
  in = in.subspan(size);
  return true;
}

} // namespace

std::optional<std::string> RecordDecoder::decodeKeyframe(std::span<const uint8_t> &in) {
  if (!getVarint(in, state_[pc_]))
    return "truncated keyframe";
  for (unsigned slot = 0; slot < slots_; ++slot)
    if (slot != pc_ && !getVarint(in, state_[slot]))
      return "truncated keyframe";
  std::copy(state_.begin(), state_.begin() + mainCount_, record_.regs.begin());
  std::copy(state_.begin() + mainCount_, state_.end(), record_.ext.begin());
  uint64_t length = 0, count = 0;
  if (!getVarint(in, length) || length > kMaxInstructionBytes ||
      !getBytes(in, length, record_.instruction))
    return "bad instruction bytes in keyframe";
  if (!getVarint(in, count) || count > kMaxAccesses)
    return "bad memory accesses in keyframe";
  return decodeEscapes(in, true, count);
}

std::optional<std::string> RecordDecoder::decodeDelta(std::span<const uint8_t> &in) {
  if (in.empty())
    return "truncated record";
  const uint8_t head = in[0];
  in = in.subspan(1);
  if ((head & kReservedBits) ||
      ((head & kAllDeviate) && ((head & kRegMask) >> kRegShift) != kRegsDeviate))
    return "reserved bits set in a record head";
  const uint64_t pcBefore = state_[pc_];
  const Prediction predict{lookup(pcBefore)};

  if (head & kInstructionFollows) {
    uint64_t length = 0;
    if (!getVarint(in, length) || length > kMaxInstructionBytes ||
        !getBytes(in, length, record_.instruction))
      return "bad instruction bytes";
  } else if (auto remembered = predict.instruction()) {
    record_.instruction.assign(remembered->begin(), remembered->end());
  } else {
    return "instruction bytes missing";
  }

  const uint64_t fallThrough = pcBefore + record_.instruction.size();
  uint64_t pc = pcBefore;
  switch (head & kPcMask) {
  case kPcPredicted:
    pc = predict.history ? predict.history->nextPc : fallThrough;
    break;
  case kPcFallThrough:
    pc = fallThrough;
    break;
  case kPcUnchanged:
    break;
  case kPcDelta: {
    uint64_t delta = 0;
    if (!getVarint(in, delta))
      return "truncated pc";
    pc = pcBefore + static_cast<uint64_t>(unzigzag(delta));
    break;
  }
  }
  if (head & kMemoryFollows)
    before_ = state_;

  Changes changes;
  bool valuesOk = true;
  auto update = [&](unsigned slot, uint64_t value) {
    changes.add(slot, value - state_[slot]);
    setSlot(slot, value);
  };
  auto getValue = [&](unsigned slot, uint64_t predicted) {
    uint64_t payload = 0;
    bool xorForm = false;
    if (!getTagged(in, payload, xorForm)) {
      valuesOk = false;
      return;
    }
    update(slot,
           xorForm ? state_[slot] ^ payload : predicted + static_cast<uint64_t>(unzigzag(payload)));
  };
  const SlotMask expected = predict.changed();
  switch ((head & kRegMask) >> kRegShift) {
  case kRegsPredicted: {
    unsigned k = 0;
    expected.forEach([&](unsigned slot) { update(slot, state_[slot] + predict.delta(k++)); });
    break;
  }
  case kRegsDeviate: {
    SlotMask deviations;
    const unsigned members = expected.count();
    if (head & kAllDeviate) {
      for (unsigned k = 0; k < members; ++k)
        deviations.set(k);
    } else if (!getWideVarint(in, deviations)) {
      return "truncated deviation bitmap";
    }
    if (members < kMaxSlots && !shiftedDown(deviations, members).empty())
      return "deviation of a register that was not predicted to change";
    unsigned k = 0;
    expected.forEach([&](unsigned slot) {
      const uint64_t predicted = state_[slot] + predict.delta(k);
      if (deviations.test(k++))
        getValue(slot, predicted);
      else
        update(slot, predicted);
    });
    break;
  }
  case kRegsExplicit: {
    uint64_t first = 0;
    if (!getVarint(in, first) || first >> mainCount_ > 1)
      return "bad register bitmap";
    SlotMask changed;
    changed.words[0] = first & ((uint64_t{1} << mainCount_) - 1);
    if (first >> mainCount_) {
      SlotMask ext;
      if (slots_ == mainCount_ || !getWideVarint(in, ext) ||
          !shiftedDown(ext, slots_ - mainCount_).empty())
        return "bad extended register bitmap";
      ext.forEach([&](unsigned slot) { changed.set(mainCount_ + slot); });
    }
    if (changed.test(pc_))
      return "pc in the register bitmap";
    changed.forEach([&](unsigned slot) { getValue(slot, state_[slot] + predict.deltaOf(slot)); });
    break;
  }
  default:
    break;
  }
  if (!valuesOk)
    return "truncated register value";
  setSlot(pc_, pc);

  if (head & kMemoryFollows)
    if (auto problem = decodeMemory(in, pcBefore))
      return problem;
  if (!predict.history || (head & (kPcMask | kRegMask | kInstructionFollows)) != 0)
    remember(pcBefore, pc, changes, record_.instruction);
  return std::nullopt;
}

std::optional<std::string> RecordDecoder::decodeMemory(std::span<const uint8_t> &in,
                                                       uint64_t pcBefore) {
  uint64_t head = 0;
  if (!getVarint(in, head))
    return "truncated memory section";
  const uint64_t bitmap = head >> 1;
  if (bitmap) {
    const std::vector<MemorySlot> slots = modelSlots(record_.instruction, pcBefore);
    if (slots.size() < 64 && bitmap >> slots.size())
      return slots.empty() ? "memory slots without a memory operand model that predicts them"
                           : "memory slot the model does not predict";
    for (size_t slot = 0; slot < slots.size(); ++slot) {
      if (!((bitmap >> slot) & 1))
        continue;
      const MemorySlot &s = slots[slot];
      if (s.size == 0 || s.size > kMaxAccessBytes || !(s.read || s.write))
        return "unusable memory slot";
      MemoryAccess &a = record_.memory.emplace_back();
      a.address = s.address;
      a.size = s.size;
      a.read = s.read;
      a.write = s.write;
      if ((a.read && !decodeValue(in, a.size, false, a.readValue)) ||
          (a.write && !decodeValue(in, a.size, false, a.writtenValue)))
        return "bad memory value";
    }
  }
  if (head & 1) {
    uint64_t count = 0;
    if (!getVarint(in, count) || count == 0 || count > kMaxAccesses - record_.memory.size())
      return "bad escape count";
    return decodeEscapes(in, false, count);
  }
  return std::nullopt;
}

std::optional<std::string> RecordDecoder::decodeEscapes(std::span<const uint8_t> &in, bool keyframe,
                                                        uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t delta = 0, size = 0;
    if (!getVarint(in, delta) || !getVarint(in, size) || in.empty())
      return "truncated memory access";
    const uint8_t flags = in[0];
    in = in.subspan(1);
    if (size == 0 || size > kMaxAccessBytes || flags == 0 ||
        (flags & ~(kAccessRead | kAccessWrite)))
      return "bad memory access";
    MemoryAccess &a = record_.memory.emplace_back();
    a.address = lastEscape_ + static_cast<uint64_t>(unzigzag(delta));
    lastEscape_ = a.address;
    a.size = static_cast<uint32_t>(size);
    a.read = flags & kAccessRead;
    a.write = flags & kAccessWrite;
    if ((a.read && !decodeValue(in, a.size, keyframe, a.readValue)) ||
        (a.write && !decodeValue(in, a.size, keyframe, a.writtenValue)))
      return "bad memory value";
  }
  return std::nullopt;
}

bool RecordDecoder::decodeValue(std::span<const uint8_t> &in, uint32_t size, bool keyframe,
                                std::vector<uint8_t> &value) const {
  uint64_t code = 0;
  if (!getVarint(in, code))
    return false;
  if (code == 0)
    return getBytes(in, size, value);
  uint64_t slot = code - 1;
  std::span<const uint64_t> source = state_;
  if (slot >= slots_) {
    slot -= slots_;
    source = before_;
    if (keyframe || slot >= slots_)
      return false;
  }
  if (size > kMaxSourceBytes || slot + slotsSpanned(size) > slots_)
    return false;
  value.resize(size);
  for (uint32_t k = 0; k < size; ++k)
    value[k] = static_cast<uint8_t>(source[slot + k / 8] >> (8 * (k % 8)));
  return true;
}

} // namespace strobe
