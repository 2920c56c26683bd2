#include "codec/RecordCoder.h"

#include "codec/ShortBytes.h"
#include "codec/Varint.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

// encodeDelta and decodeDelta are built twice, for the baseline x86-64 and for x86-64-v3 (POPCNT,
// LZCNT, BMI2, AVX2), and the loader picks the one the CPU runs: the baseline counts bits in
// software, and a register that changes at a pc with a prediction takes a count (its rank among
// the predicted ones). Samples encode and decode 5-9 % faster (best passes: chase-loop samples
// 14.4 -> 15.8 million records a second); step records without memory, no differently. GCC only:
// clang, which builds the fuzzer, wants the attribute on the declarations too.
#if defined(__x86_64__) && defined(__ELF__) && !defined(__clang__)
#define STROBE_CPU_VERSIONS [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define STROBE_CPU_VERSIONS
#endif

namespace strobe {
namespace {

constexpr unsigned kMaxSourceBytes = 16;

// The members at or above `by` (< 64), each moved down by `by`.
SlotMask shiftedDown(const SlotMask &mask, unsigned by) {
  SlotMask out;
  out.words[0] = by == 0 ? mask.words[0] : mask.words[0] >> by | mask.words[1] << (64 - by);
  out.words[1] = mask.words[1] >> by;
  return out;
}

const History kNothingKnown{};

// What the history of a record's pcBefore predicts. Without one, nothing changes, the pc falls
// through and an empty instruction need not be stored (samples have none); reading a blank entry
// for that spares the hot path a null check per question.
struct Prediction {
  const History &history;
  bool known;

  explicit Prediction(const History *found)
      : history(found ? *found : kNothingKnown), known(found != nullptr) {}

  uint64_t nextPc(uint64_t fallThrough) const { return known ? history.nextPc : fallThrough; }
  SlotMask changed() const { return history.changed; }
  // The delta of the k-th member of changed().
  uint64_t delta(unsigned k) const { return k < history.deltaCount ? history.deltas[k] : 0; }
  // The delta of `slot`, a member of changed() or not.
  uint64_t deltaOf(unsigned slot) const {
    return history.changed.test(slot) ? delta(history.changed.rank(slot)) : 0;
  }
  // The instruction bytes a record at this pc need not repeat; nullopt: too long to remember.
  std::optional<std::span<const uint8_t>> instruction() const {
    if (history.instructionLength == History::kUnknownInstruction)
      return std::nullopt;
    return std::span<const uint8_t>(history.instruction.data(), history.instructionLength);
  }
};

} // namespace

CoderState::CoderState(const StreamHeader &header, MemoryOperandModel *model)
    : header_(header), sampled_(header.coding == RecordCoding::Sampled),
      slots_(std::min(header.layout.slots(), kMaxSlots)), mainCount_(header.layout.mainCount),
      pc_(header.layout.pcIndex), model_(model),
      history_(size_t{1} << std::min(header.historyBits, kMaxHistoryBits)) {}

void CoderState::beginBlock() {
  inBlock_ = false;
  lastEscape_ = 0;
  if (++generation_ == 0) { // after 2^32 blocks: forget the table for real
    std::fill(history_.begin(), history_.end(), History{});
    generation_ = 1;
  }
}

// Inline (flatten had left it a call): every record remembers.
[[gnu::always_inline]] inline void CoderState::remember(History &h, bool inPlace, uint64_t pcBefore,
                                                        uint64_t nextPc,
                                                        std::span<const uint8_t> instruction,
                                                        bool instructionKnown) {
  h.nextPc = nextPc;
  if (!inPlace) {
    h.pc = pcBefore;
    h.generation = generation_;
    h.changed = changes_.slots;
    h.deltaCount = changes_.deltaCount;
    h.deltas = changes_.deltas;
  }
  if (instructionKnown)
    return;
  h.memoryLearned = false; // learned for other bytes, or another pc's
  if (instruction.size() <= h.instruction.size()) {
    copyShort(h.instruction.data(), instruction.data(), instruction.size());
    h.instructionLength = static_cast<uint8_t>(instruction.size());
  } else {
    h.instructionLength = History::kUnknownInstruction;
  }
}

void CoderState::beginMemoryRecord(std::span<const uint8_t> instruction, uint64_t pcBefore,
                                   const SlotMask &changing) {
  if (!model_ || !model_->predict(instruction, pcBefore,
                                  std::span<const uint64_t>(state_.data(), slots_), predicted_))
    predicted_.clear();
  keepBefore(changing);
}

void CoderState::keepBefore(const SlotMask &changing) {
  // In registers (the pc is a main slot, so in the first word): set() through memory, read back
  // right away, had stalled on the store.
  const SlotMask kept{{changing.words[0] | uint64_t{1} << pc_, changing.words[1]}};
  kept.forEach([&](unsigned slot) { before_[slot] = state_[slot]; });
  kept_ = kept;
}

namespace {

// Whether slots `first` and `second` (for a value of more than 8 bytes) hold `value` (1..16
// bytes). Out of the way of the common 8 bytes, which need no masks.
bool heldBy(std::span<const uint8_t> value, uint64_t first, uint64_t second) {
  if (value.size() == 8) {
    uint64_t word;
    std::memcpy(&word, value.data(), 8);
    return word == first;
  }
  return SlotValue::of(value).heldBy(first, second);
}

} // namespace

bool CoderState::matchesRecipe(const MemoryRecipe &recipe, const TraceRecord &record) const {
  const size_t count = recipe.formulas.size();
  if (record.memory.size() != count)
    return false;
  const std::span<const uint64_t> regs(state_.data(), slots_);
  // A value's source is a slot of this record: the record's own registers, not yet in state_.
  // A value of the formula's size fits the slots from its source on (see learnMemory).
  auto slotValue = [&](unsigned slot) {
    return slot < mainCount_ ? record.regs[slot] : record.ext[slot - mainCount_];
  };
  auto inSource = [&](std::span<const uint8_t> value, uint8_t source) {
    if (source == MemoryRecipe::kLiteral)
      return true;
    const unsigned slot = source - 1u;
    return heldBy(value, slotValue(slot), value.size() > 8 ? slotValue(slot + 1) : 0);
  };
  unsigned v = 0;
  for (size_t k = 0; k < count; ++k) {
    const AccessFormula &f = recipe.formulas[k];
    const MemoryAccess &a = record.memory[k];
    if (a.size != f.size || a.read != f.read || a.write != f.write || a.address != f.address(regs))
      return false;
    if (a.read && !inSource(a.readValue, recipe.sources[v++]))
      return false;
    if (a.write && !inSource(a.writtenValue, recipe.sources[v++]))
      return false;
  }
  return true;
}

void CoderState::learnMemory(History &entry, bool instructionKnown,
                             std::span<const uint8_t> instruction, uint64_t pcBefore) {
  entry.memoryLearned = false;
  // Only the second time at a pc: straight-line code would pay for the formulas and never use
  // them.
  if (!recipeFits_ || !instructionKnown || !model_ ||
      !model_->formulas(instruction, pcBefore, learned_.formulas) ||
      learned_.formulas.size() != predicted_.size())
    return;
  // The slots' sizes and directions, which the section's values were coded at (and checked
  // against the slots that hold them), so that records as remembered need no checks of their own.
  for (size_t k = 0; k < predicted_.size(); ++k) {
    const AccessFormula &f = learned_.formulas[k];
    const MemorySlot &s = predicted_[k];
    if (f.size != s.size || f.read != s.read || f.write != s.write)
      return;
  }
  learned_.literals = std::find(learned_.sources.begin(), learned_.sources.begin() + recipeValues_,
                                MemoryRecipe::kLiteral) != learned_.sources.begin() + recipeValues_;
  if (recipes_.empty())
    recipes_.resize(history_.size());
  recipes_[&entry - history_.data()] = learned_;
  entry.memoryLearned = true;
}

uint64_t CoderState::previous(unsigned slot) const {
  return kept_.test(slot) ? before_[slot] : state_[slot];
}

// --- encoder ---

RecordEncoder::RecordEncoder(const StreamHeader &header, MemoryOperandModel *model)
    : CoderState(header, model) {
  const StreamLayout &layout = header.layout;
  if (layout.mainCount == 0 || layout.mainCount > kMaxMainSlots ||
      layout.pcIndex >= layout.mainCount || layout.slots() > kMaxSlots ||
      header.historyBits > kMaxHistoryBits || header.keyframeInterval == 0 ||
      header.keyframeInterval > kMaxKeyframeInterval || header.memoryModel.size() > kMaxModelName ||
      (sampled_ && layout.extSlots != 0))
    throw std::invalid_argument("unusable diff-record stream header");
}

namespace {

// Per memory access, beyond its values' bytes: an escape's address, size and flags, and the
// source codes of its two values; plus the memory section's head and escape count.
constexpr size_t kAccessBound = 10 + 10 + 1 + 2 * 10;
constexpr size_t kMemoryBound = 2 * 10;

} // namespace

namespace {

[[noreturn]] void reject(const std::string &what) {
  throw std::invalid_argument("trace record: " + what);
}

} // namespace

void RecordEncoder::rejectShape(const TraceRecord &record) const {
  const StreamLayout &layout = header_.layout;
  if (record.regs.size() != layout.mainCount)
    reject(std::to_string(record.regs.size()) + " registers, expected " +
           std::to_string(layout.mainCount));
  if (record.ext.size() != layout.extSlots)
    reject(std::to_string(record.ext.size()) + " extended slots, expected " +
           std::to_string(layout.extSlots));
  if (record.instruction.size() > kMaxInstructionBytes)
    reject("instruction of " + std::to_string(record.instruction.size()) + " bytes");
  reject("instruction bytes or memory in a sampled stream, which holds registers only");
}

size_t RecordEncoder::memoryBound(const TraceRecord &record) {
  if (record.memory.size() > kMaxAccesses)
    reject(std::to_string(record.memory.size()) + " memory accesses");
  size_t memoryBytes = 0;
  for (const MemoryAccess &a : record.memory) {
    if (a.size == 0 || a.size > kMaxAccessBytes || !(a.read || a.write) ||
        a.readValue.size() != (a.read ? a.size : 0) ||
        a.writtenValue.size() != (a.write ? a.size : 0))
      reject("inconsistent memory access");
    memoryBytes += a.readValue.size() + a.writtenValue.size();
  }
  if (memoryBytes > kMaxRecordMemoryBytes)
    reject(std::to_string(memoryBytes) + " bytes of memory values");
  return kRecordBound + kMemoryBound + kAccessBound * record.memory.size() + memoryBytes;
}

uint8_t *RecordEncoder::encodeKeyframe(const TraceRecord &record, uint8_t *out) {
  std::copy(record.regs.begin(), record.regs.end(), state_.begin());
  std::copy(record.ext.begin(), record.ext.end(), state_.begin() + mainCount_);
  out = writeVarint(state_[pc_], out);
  for (unsigned slot = 0; slot < slots_; ++slot)
    if (slot != pc_)
      out = writeVarint(state_[slot], out);
  out = writeVarint(record.instruction.size(), out);
  out = std::copy(record.instruction.begin(), record.instruction.end(), out);
  out = writeVarint(record.memory.size(), out);
  for (const MemoryAccess &access : record.memory)
    out = encodeEscape(access, true, out);
  return out;
}

// Flattened (every helper inlined): about 7% fewer instructions per record.
[[gnu::flatten]] STROBE_CPU_VERSIONS uint8_t *RecordEncoder::encodeDelta(const TraceRecord &record,
                                                                         uint8_t *out) {
  const uint64_t pcBefore = state_[pc_];
  History &entry = entryFor(pcBefore);
  const Prediction predict{known(entry, pcBefore)};
  const std::span<const uint8_t> instruction = record.instruction;
  const auto remembered = predict.instruction();
  const bool sendInstruction =
      !remembered || remembered->size() != instruction.size() ||
      !sameShort(remembered->data(), instruction.data(), instruction.size());

  // Members and the record's fields in locals: a byte written through `out` may alias any of
  // them, which the compiler would then reload after every byte.
  const unsigned mainCount = mainCount_;
  const bool withMemory = !record.memory.empty();
  const uint64_t *regs = record.regs.data();
  const uint64_t *ext = record.ext.data();
  auto valueOf = [&](unsigned slot) {
    return slot < mainCount ? regs[slot] : ext[slot - mainCount];
  };
  const uint64_t pc = regs[pc_];
  const uint64_t fallThrough = pcBefore + instruction.size();
  const uint64_t predictedPc = predict.nextPc(fallThrough);
  const uint8_t pcCode = pc == predictedPc   ? kPcPredicted
                         : pc == fallThrough ? kPcFallThrough
                         : pc == pcBefore    ? kPcUnchanged
                                             : kPcDelta;

  const SlotMask expected = predict.changed();
  // Where the last record at this pc changed extended slots (a vector instruction), this one
  // most likely does too.
  const bool extExpected = expected.words[1] != 0 || expected.words[0] >> mainCount != 0;
  SlotMask changed =
      changedSlots_(regs, ext, state_.data(), mainCount, slots_ - mainCount, extExpected);
  changed.words[0] &= ~(uint64_t{1} << pc_);

  uint8_t memoryHead = 0;
  if (withMemory)
    memoryHead = beginMemory(record, entry, pcBefore, changed);

  uint8_t *const head = out++; // written last, once the register code is known
  if (sendInstruction) {
    out = writeVarint(instruction.size(), out);
    out = std::copy(instruction.begin(), instruction.end(), out);
  }
  if (pcCode == kPcDelta)
    out = writeVarint(zigzag(static_cast<int64_t>(pc - pcBefore)), out);

  auto putValue = [&](unsigned slot, uint64_t value, uint64_t predicted) {
    const uint64_t arithmetic = zigzag(static_cast<int64_t>(value - predicted));
    const uint64_t xored = value ^ state_[slot];
    // The smaller payload is never the longer one to write (a tagged value's size grows with its
    // payload), and one compare chooses without a branch, where comparing the two sizes had one
    // the data decided.
    const bool xorForm = xored < arithmetic;
    out = writeTagged(xorForm ? xored : arithmetic, xorForm, out);
  };
  uint8_t regCode;
  bool allDeviate = false;
  Changes &changes = changes_;
  changes.clear();
  if (changed == expected) {
    // One pass: deviating values are written as they are met, and the bitmap of which ones
    // deviate is moved in before them afterwards in the rare case that some do not. (With
    // members, the pc is known: an unknown one predicts no changes. Its entry learns in place.)
    uint8_t *const values = out;
    SlotMask deviations; // positions within `expected`
    unsigned k = 0, deviating = 0;
    expected.forEach([&](unsigned slot) {
      const uint64_t value = valueOf(slot);
      const uint64_t predicted = state_[slot] + predict.delta(k);
      if (value != predicted) {
        deviations.set(k);
        ++deviating;
        putValue(slot, value, predicted);
        if (k < kPredictedDeltas)
          entry.deltas[k] = value - state_[slot];
      }
      state_[slot] = value;
      ++k;
    });
    regCode = deviating == 0 ? kRegsPredicted : kRegsDeviate;
    allDeviate = deviating != 0 && deviating == k;
    if (deviating != 0 && !allDeviate) {
      std::array<uint8_t, 19> bitmap;
      const size_t size =
          static_cast<size_t>(writeWideVarint(deviations, bitmap.data()) - bitmap.data());
      std::memmove(values + size, values, static_cast<size_t>(out - values));
      std::copy_n(bitmap.begin(), size, values);
      out += size;
    }
  } else if (changed.empty()) {
    regCode = kRegsNone;
  } else {
    regCode = kRegsExplicit;
    const SlotMask ext = shiftedDown(changed, mainCount);
    const uint64_t mainBits = changed.words[0] & ((uint64_t{1} << mainCount) - 1);
    out = writeVarint(mainBits | uint64_t{!ext.empty()} << mainCount, out);
    if (!ext.empty())
      out = writeWideVarint(ext, out);
    changes.slots = changed;
    changed.forEach([&](unsigned slot) {
      const uint64_t value = valueOf(slot);
      putValue(slot, value, state_[slot] + predict.deltaOf(slot));
      changes.addDelta(value - state_[slot]);
      state_[slot] = value;
    });
  }
  *head = static_cast<uint8_t>(pcCode | regCode << kRegShift |
                               (sendInstruction ? kInstructionFollows : 0) | memoryHead |
                               (allDeviate ? kAllDeviate : 0));
  state_[pc_] = pc;

  if (withMemory)
    out = encodeMemory(record, entry, memoryHead, pcBefore, out);
  remember(entry, learnsInPlace(predict.known, regCode), pcBefore, pc, instruction,
           predict.known && !sendInstruction);
  return out;
}

uint8_t RecordEncoder::beginMemory(const TraceRecord &record, const History &entry,
                                   uint64_t pcBefore, const SlotMask &changing) {
  if (const MemoryRecipe *recipe =
          recipeOf(entry, instructionKnown(entry, pcBefore, record.instruction));
      recipe && matchesRecipe(*recipe, record))
    return kMemoryRemembered;
  beginMemoryRecord(record.instruction, pcBefore, changing);
  return kMemoryFollows;
}

uint8_t *RecordEncoder::encodeMemory(const TraceRecord &record, History &entry, uint8_t memoryHead,
                                     uint64_t pcBefore, uint8_t *out) {
  if (memoryHead == kMemoryRemembered) {
    const MemoryRecipe &recipe = *recipeOf(entry, true);
    return recipe.literals ? encodeRemembered(record, recipe, out) : out;
  }
  out = encodeSection(record, out);
  // (Before remember(): it forgets the entry's memory only where the instruction is not known,
  // and then there is nothing to learn.)
  learnMemory(entry, instructionKnown(entry, pcBefore, record.instruction), record.instruction,
              pcBefore);
  return out;
}

uint8_t *RecordEncoder::encodeSection(const TraceRecord &record, uint8_t *out) {
  const MemorySlots &slots = predicted_;
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
  beginRecipe(bitmap, matched, escapes != 0);
  out = writeVarint(bitmap << 1 | (escapes ? 1 : 0), out);
  for (size_t i = 0; i < matched; ++i) {
    const MemoryAccess &a = record.memory[i];
    if (a.read)
      out = encodeValue(a.readValue, false, out);
    if (a.write)
      out = encodeValue(a.writtenValue, false, out);
  }
  if (escapes) {
    out = writeVarint(escapes, out);
    for (size_t i = matched; i < record.memory.size(); ++i)
      out = encodeEscape(record.memory[i], false, out);
  }
  return out;
}

uint8_t *RecordEncoder::encodeRemembered(const TraceRecord &record, const MemoryRecipe &recipe,
                                         uint8_t *out) {
  unsigned v = 0;
  for (const MemoryAccess &a : record.memory) {
    if (a.read && recipe.sources[v++] == MemoryRecipe::kLiteral)
      out = std::copy(a.readValue.begin(), a.readValue.end(), out);
    if (a.write && recipe.sources[v++] == MemoryRecipe::kLiteral)
      out = std::copy(a.writtenValue.begin(), a.writtenValue.end(), out);
  }
  return out;
}

uint8_t *RecordEncoder::encodeEscape(const MemoryAccess &access, bool keyframe, uint8_t *out) {
  out = writeVarint(zigzag(static_cast<int64_t>(access.address - lastEscape_)), out);
  lastEscape_ = access.address;
  out = writeVarint(access.size, out);
  *out++ =
      static_cast<uint8_t>((access.read ? kAccessRead : 0) | (access.write ? kAccessWrite : 0));
  if (access.read)
    out = encodeValue(access.readValue, keyframe, out);
  if (access.write)
    out = encodeValue(access.writtenValue, keyframe, out);
  return out;
}

uint8_t *RecordEncoder::encodeValue(std::span<const uint8_t> value, bool keyframe, uint8_t *out) {
  if (value.size() <= kMaxSourceBytes) {
    const SlotValue v = SlotValue::of(value);
    if (const unsigned slot = findValue_(state_.data(), slots_, v); slot < slots_) {
      noteSource(1 + slot);
      return writeVarint(1 + slot, out);
    }
    // Where the value is not among this record's slots, it can only be among prev's in a run of
    // slots that changed: elsewhere prev's slots are this record's. A value loaded for
    // arithmetic is in neither, and was searched for twice over all slots.
    // (A keyframe has no prev.)
    SlotMask starts = keyframe ? SlotMask{} : kept_;
    if (v.span == 2)
      starts = starts | shiftedDown(starts, 1);
    std::optional<unsigned> found;
    starts.forEach([&](unsigned r) {
      if (!found && r + v.span <= slots_ &&
          v.heldBy(previous(r), v.span == 2 ? previous(r + 1) : 0))
        found = r;
    });
    if (found) {
      noteSource(1 + slots_ + *found);
      return writeVarint(1 + slots_ + *found, out);
    }
  }
  noteSource(MemoryRecipe::kLiteral);
  *out++ = 0;
  return std::copy(value.begin(), value.end(), out);
}

// --- decoder ---

RecordDecoder::RecordDecoder(const StreamHeader &header, MemoryOperandModel *model)
    : CoderState(header, model) {
  record_.regs.resize(mainCount_);
  record_.ext.resize(slots_ - mainCount_);
}

MemoryAccess &RecordDecoder::addAccess(uint64_t address, uint32_t size, bool read, bool write) {
  MemoryAccess &a = record_.memory.reuse();
  a.address = address;
  a.size = size;
  a.read = read;
  a.write = write;
  // The values it has are overwritten; not clearing them first often leaves the resizing
  // nothing to do (the last access had a value of the same size).
  if (!read)
    a.readValue.clear();
  if (!write)
    a.writtenValue.clear();
  return a;
}

namespace {

// An instruction from the prediction table (at most 16 bytes) into the record.
void setInstruction(std::vector<uint8_t> &instruction, std::span<const uint8_t> bytes) {
  if (instruction.size() != bytes.size())
    instruction.resize(bytes.size());
  copyShort(instruction.data(), bytes.data(), bytes.size());
}

// Whether a slot the model gives can be an access of a stream.
bool usable(const MemorySlot &s) {
  return s.size != 0 && s.size <= kMaxAccessBytes && (s.read || s.write);
}

bool getBytes(std::span<const uint8_t> &in, size_t size, std::vector<uint8_t> &out) {
  if (size > in.size())
    return false;
  out.assign(in.begin(), in.begin() + static_cast<ptrdiff_t>(size));
  in = in.subspan(size);
  return true;
}

} // namespace

const char *RecordDecoder::decodeKeyframe(std::span<const uint8_t> &in) {
  if (!getVarint(in, state_[pc_]))
    return "truncated keyframe";
  for (unsigned slot = 0; slot < slots_; ++slot)
    if (slot != pc_ && !getVarint(in, state_[slot]))
      return "truncated keyframe";
  std::copy(state_.begin(), state_.begin() + mainCount_, record_.regs.begin());
  std::copy(state_.begin() + mainCount_, state_.begin() + slots_, record_.ext.begin());
  uint64_t length = 0, count = 0;
  if (!getVarint(in, length) || length > kMaxInstructionBytes ||
      !getBytes(in, length, record_.instruction))
    return "bad instruction bytes in keyframe";
  if (!getVarint(in, count) || count > kMaxAccesses)
    return "bad memory accesses in keyframe";
  return decodeEscapes(in, true, count);
}

// Flattened like encodeDelta.
[[gnu::flatten]] STROBE_CPU_VERSIONS const char *
RecordDecoder::decodeDelta(std::span<const uint8_t> &input) {
  // Read from a copy that stays in registers: a store into the state may alias `input`, and so
  // may one into a local whose address a call saw (hence the copies for such calls). A failed
  // record loses its block, so where `input` stops then does not matter.
  std::span<const uint8_t> in = input;
  auto outOfLine = [&](auto read) {
    std::span<const uint8_t> rest = in;
    const bool ok = read(rest);
    in = rest;
    return ok;
  };
  if (in.empty())
    return "truncated record";
  const uint8_t head = in[0];
  in = in.subspan(1);
  const uint8_t regCode = (head & kRegMask) >> kRegShift;
  // Bitwise, not ||: the short-circuit's branch on the all-deviate bit mispredicted often.
  // (The memory bits are checked where records with memory go: beginMemory.)
  if (((head & kAllDeviate) != 0) & (regCode != kRegsDeviate))
    return "reserved bits set in a record head";
  const uint64_t pcBefore = state_[pc_];
  History &entry = entryFor(pcBefore);
  const Prediction predict{known(entry, pcBefore)};

  if (head & kInstructionFollows) {
    uint64_t length = 0;
    if (!getVarint(in, length) || length > kMaxInstructionBytes ||
        !getBytes(in, length, record_.instruction))
      return "bad instruction bytes";
  } else if (auto remembered = predict.instruction()) {
    setInstruction(record_.instruction, *remembered);
  } else {
    return "instruction bytes missing";
  }

  const uint64_t fallThrough = pcBefore + record_.instruction.size();
  uint64_t pc = pcBefore;
  switch (head & kPcMask) {
  case kPcPredicted:
    pc = predict.nextPc(fallThrough);
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
  // (An explicit record's slots are known once its bitmap is read: it keeps them there.)
  if (head & (kMemoryFollows | kMemoryRemembered))
    if (const char *problem = beginMemory(head, entry, pcBefore))
      return problem;

  Changes &changes = changes_;
  changes.clear();
  bool valuesOk = true;
  // A deviating or explicit slot's stored value, into `value` (its prediction on entry).
  auto getValue = [&](unsigned slot, uint64_t &value) {
    uint64_t payload = 0;
    bool xorForm = false;
    if (!getTagged(in, payload, xorForm))
      return valuesOk = false;
    value = xorForm ? state_[slot] ^ payload : value + static_cast<uint64_t>(unzigzag(payload));
    return true;
  };
  const SlotMask expected = predict.changed();
  switch (regCode) {
  case kRegsPredicted: {
    unsigned k = 0;
    expected.forEach([&](unsigned slot) { setSlot(slot, state_[slot] + predict.delta(k++)); });
    break;
  }
  case kRegsDeviate: {
    // Half the records have every value deviate: they need no bitmap, nor its check.
    const bool all = head & kAllDeviate;
    SlotMask deviations;
    if (!all) {
      if (!outOfLine([&](auto &rest) { return getWideVarint(rest, deviations); }))
        return "truncated deviation bitmap";
      if (!deviations.below(expected.count()))
        return "deviation of a register that was not predicted to change";
    }
    // Members only at a known pc, whose entry learns in place (see encodeDelta).
    unsigned k = 0;
    expected.forEach([&](unsigned slot) {
      uint64_t value = state_[slot] + predict.delta(k);
      if ((all || deviations.test(k)) && getValue(slot, value) && k < kPredictedDeltas)
        entry.deltas[k] = value - state_[slot];
      setSlot(slot, value);
      ++k;
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
      if (slots_ == mainCount_ ||
          !outOfLine([&](auto &rest) { return getWideVarint(rest, ext); }) ||
          !ext.below(slots_ - mainCount_))
        return "bad extended register bitmap";
      ext.forEach([&](unsigned slot) { changed.set(mainCount_ + slot); });
    }
    if (changed.test(pc_))
      return "pc in the register bitmap";
    changes.slots = changed;
    if (head & kMemoryFollows)
      keepBefore(changed);
    changed.forEach([&](unsigned slot) {
      uint64_t value = state_[slot] + predict.deltaOf(slot);
      getValue(slot, value);
      changes.addDelta(value - state_[slot]);
      setSlot(slot, value);
    });
    break;
  }
  default:
    break;
  }
  if (!valuesOk)
    return "truncated register value";
  setSlot(pc_, pc);

  if (head & (kMemoryFollows | kMemoryRemembered)) {
    const char *problem = nullptr;
    outOfLine([&](auto &rest) { return !(problem = decodeMemory(rest, head, entry, pcBefore)); });
    if (problem)
      return problem;
  }
  remember(entry, learnsInPlace(predict.known, regCode), pcBefore, pc, record_.instruction,
           predict.known && !(head & kInstructionFollows));
  input = in;
  return nullptr;
}

const char *RecordDecoder::beginMemory(uint8_t head, const History &entry, uint64_t pcBefore) {
  if ((head & rejectedHeadBits_) ||
      (head & (kMemoryFollows | kMemoryRemembered)) == (kMemoryFollows | kMemoryRemembered))
    return "reserved bits set in a record head";
  if (head & kMemoryFollows) {
    beginMemoryRecord(record_.instruction, pcBefore,
                      known(entry, pcBefore) ? entry.changed : SlotMask{});
    return nullptr;
  }
  const MemoryRecipe *recipe = recipeOf(entry, instructionKnown(entry, pcBefore, head));
  if (!recipe)
    return "memory as remembered where none was learned";
  // The accesses, at the addresses prev's registers give; their values follow the registers.
  const std::span<const uint64_t> regs(state_.data(), slots_);
  for (const AccessFormula &f : recipe->formulas)
    addAccess(f.address(regs), f.size, f.read, f.write);
  return nullptr;
}

const char *RecordDecoder::decodeMemory(std::span<const uint8_t> &in, uint8_t head, History &entry,
                                        uint64_t pcBefore) {
  if (head & kMemoryRemembered)
    return decodeRemembered(in, *recipeOf(entry, true));
  if (const char *problem = decodeSection(in))
    return problem;
  // (See encodeMemory.)
  learnMemory(entry, instructionKnown(entry, pcBefore, head), record_.instruction, pcBefore);
  return nullptr;
}

const char *RecordDecoder::decodeSection(std::span<const uint8_t> &in) {
  uint64_t head = 0;
  if (!getVarint(in, head))
    return "truncated memory section";
  const uint64_t bitmap = head >> 1;
  beginRecipe(bitmap, static_cast<size_t>(std::popcount(bitmap)), head & 1);
  if (bitmap) {
    const MemorySlots &slots = predicted_;
    if (slots.size() < 64 && bitmap >> slots.size())
      return slots.empty() ? "memory slots without a memory operand model that predicts them"
                           : "memory slot the model does not predict";
    for (size_t slot = 0; slot < slots.size(); ++slot) {
      if (!((bitmap >> slot) & 1))
        continue;
      const MemorySlot &s = slots[slot];
      if (!usable(s))
        return "unusable memory slot";
      MemoryAccess &a = addAccess(s.address, s.size, s.read, s.write);
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
  return nullptr;
}

const char *RecordDecoder::decodeRemembered(std::span<const uint8_t> &in,
                                            const MemoryRecipe &recipe) {
  unsigned v = 0;
  auto value = [&](uint32_t size, std::vector<uint8_t> &bytes) {
    const uint8_t source = recipe.sources[v++];
    if (source == MemoryRecipe::kLiteral)
      return getBytes(in, size, bytes);
    // The slots hold the value's bytes in a row, as learned (see learnMemory): no checks.
    bytes.resize(size);
    std::memcpy(bytes.data(), &state_[source - 1u], size);
    return true;
  };
  for (MemoryAccess &a : record_.memory)
    if ((a.read && !value(a.size, a.readValue)) || (a.write && !value(a.size, a.writtenValue)))
      return "truncated memory value";
  return nullptr;
}

const char *RecordDecoder::decodeEscapes(std::span<const uint8_t> &in, bool keyframe,
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
    lastEscape_ += static_cast<uint64_t>(unzigzag(delta));
    MemoryAccess &a = addAccess(lastEscape_, static_cast<uint32_t>(size), flags & kAccessRead,
                                flags & kAccessWrite);
    if ((a.read && !decodeValue(in, a.size, keyframe, a.readValue)) ||
        (a.write && !decodeValue(in, a.size, keyframe, a.writtenValue)))
      return "bad memory value";
  }
  return nullptr;
}

bool RecordDecoder::decodeValue(std::span<const uint8_t> &in, uint32_t size, bool keyframe,
                                std::vector<uint8_t> &value) {
  uint64_t code = 0;
  if (!getVarint(in, code))
    return false;
  noteSource(code);
  if (code == 0)
    return getBytes(in, size, value);
  uint64_t slot = code - 1;
  const bool fromPrevious = slot >= slots_;
  if (fromPrevious) {
    slot -= slots_;
    if (keyframe || slot >= slots_)
      return false;
  }
  return copySlots(slot, fromPrevious, size, value);
}

bool RecordDecoder::copySlots(uint64_t slot, bool fromPrevious, uint32_t size,
                              std::vector<uint8_t> &value) const {
  if (size > kMaxSourceBytes || slot + slotsSpanned(size) > slots_)
    return false;
  // The value's slots, as words: this record's, or prev's (copied out as SlotValue lays them).
  std::array<uint64_t, 2> words{};
  for (unsigned k = 0; k < slotsSpanned(size); ++k) {
    const unsigned s = static_cast<unsigned>(slot) + k;
    words[k] = fromPrevious ? previous(s) : state_[s];
  }
  value.resize(size);
  std::memcpy(value.data(), words.data(), size);
  return true;
}

} // namespace strobe
