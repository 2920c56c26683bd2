// The records inside one block of a diff-record stream (format in DiffFormat.h): RecordEncoder
// turns TraceRecords into payload bytes, RecordDecoder turns them back, exactly. Both keep the same
// prediction state, updated identically after every record. (Bits a stop mechanism sets, such as
// x86 TF and RF while single-stepping, are for whoever reads the registers to clear: the Stepper.)
// In a stream of sampled coding both hand each record to the sample coder (SampleCoder.h) instead,
// which needs none of the prediction state.
//
// Speed: a record usually changes two or three of up to 128 slots, so neither side copies the
// whole state per record; the previous state is updated in place, keeping the old values of the
// slots that changed aside for the values of memory accesses that refer to them, and records with
// memory ask the model before their registers are applied. In loops they need not ask: what a
// pc's records access is learned with the rest of its prediction (MemoryRecipe).
// Nothing is allocated per record: the encoder writes through a pointer into room reserved once
// per record, the decoder reuses its record's vectors (memory accesses included: AccessList).
#pragma once

#include "codec/ByteBuffer.h"
#include "codec/DiffFormat.h"
#include "codec/MemoryOperands.h"
#include "codec/SampleCoder.h"
#include "codec/ShortBytes.h"
#include "codec/SlotCompare.h"
#include "codec/TraceRecord.h"

namespace strobe {

// How records at one pc access memory, once learned (memory as remembered, DiffFormat.h): the
// model's formulas for the instruction's accesses, and where each value was (kLiteral: in the
// stream). A record that matches it needs neither the model nor a memory section.
struct MemoryRecipe {
  static constexpr unsigned kMaxValues = 2 * kMaxFormulas; // a read and a written value each
  static constexpr uint8_t kLiteral = 0;                   // else 1 + a slot of the record

  AccessFormulas formulas; // empty: nothing learned
  std::array<uint8_t, kMaxValues> sources{};
  bool literals = false; // some source is kLiteral
};

// What the last record made at one pc did.
struct History {
  uint64_t pc = 0;
  uint64_t nextPc = 0;
  uint32_t generation = 0; // valid only in the block of this generation
  uint8_t deltaCount = 0;
  uint8_t instructionLength = 0; // kUnknownInstruction: not remembered (too long)
  // The recipes_ entry of this one holds how records here access memory, learned for
  // `instruction` (and forgotten with it).
  bool memoryLearned = false;
  SlotMask changed;
  std::array<uint64_t, kPredictedDeltas> deltas{}; // of the first members of `changed`
  std::array<uint8_t, 16> instruction{};

  static constexpr uint8_t kUnknownInstruction = 0xff;
};

// The changes a delta record makes, as both sides learn them when the entry is rewritten.
// Each coder reuses one for every record: zeroing the deltas per record (a rep stos) took about
// 15 % of a record's time, and beyond deltaCount they keep an earlier record's values, so that
// remember() copies all of them, a fixed size (a count of them compiled to a rep movs).
struct Changes {
  SlotMask slots;
  uint8_t deltaCount = 0;
  std::array<uint64_t, kPredictedDeltas> deltas{}; // of the first deltaCount members of `slots`

  void clear() {
    slots = {};
    deltaCount = 0;
  }
  // The delta of the next member of `slots`, ascending.
  void addDelta(uint64_t delta) {
    if (deltaCount < kPredictedDeltas)
      deltas[deltaCount++] = delta;
  }
};

// The state both sides predict from.
class CoderState {
public:
  CoderState(const StreamHeader &header, MemoryOperandModel *model);

  // The next record is a keyframe; nothing before it is remembered.
  void beginBlock();
  const StreamHeader &header() const { return header_; }

protected:
  // The table entry for records made at `pc`, and what it remembers of them, if anything.
  History &entryFor(uint64_t pc) { return history_[historyIndex(pc, header_.historyBits)]; }
  const History *known(const History &entry, uint64_t pc) const {
    return entry.generation == generation_ && entry.pc == pc ? &entry : nullptr;
  }
  // Whether a record updates its entry in place: the entry is its pc's (`known`) and it changed
  // the slots the entry predicted (register code kRegsPredicted or kRegsDeviate), so only the
  // deltas of deviating values, the next pc and the instruction can differ. The coders write
  // those deltas into the entry as they meet them (where the prediction has just read them)
  // instead of collecting every delta for a rewrite: most records at a known pc are like this.
  static bool learnsInPlace(bool known, uint8_t regCode) {
    return known && (regCode == kRegsPredicted || regCode == kRegsDeviate);
  }
  // Remembers what the record made at `pcBefore` did: in place (see learnsInPlace; changes_
  // unused), or by rewriting the entry from changes_. `instructionKnown`: the entry already holds
  // these instruction bytes for this pc (most records), so copying them again would only cost
  // time.
  void remember(History &entry, bool inPlace, uint64_t pcBefore, uint64_t nextPc,
                std::span<const uint8_t> instruction, bool instructionKnown);
  // For a record with memory, before its registers are applied to state_: asks the model for
  // its instruction's slots (into predicted_; none when it cannot predict them), which it computes
  // from the registers before the instruction, and keeps the values of the slots that change
  // (`changing`, and the pc) aside in before_ for previous(). Copying the whole state aside had
  // cost records with memory more time than the rest of their coding; storing each changed
  // slot's old value in every record, records without memory 2-3 %. Out of line: inlined, it
  // made the flattened coders' other records slower.
  [[gnu::noinline]] void beginMemoryRecord(std::span<const uint8_t> instruction, uint64_t pcBefore,
                                           const SlotMask &changing);
  // The memory `entry` learned, if any, for a record whose instruction bytes are the entry's.
  const MemoryRecipe *recipeOf(const History &entry, bool instructionKnown) const {
    return instructionKnown && entry.memoryLearned ? &recipes_[&entry - history_.data()] : nullptr;
  }
  // Whether `record`'s memory is what `recipe` says, with state_ still prev's registers: each
  // access at its formula's address, size and direction, each value from its source.
  bool matchesRecipe(const MemoryRecipe &recipe, const TraceRecord &record) const;
  // After a record with a memory section: whether the section could be a recipe (every access
  // one of the model's slots, in order, all of them, at most kMaxFormulas, no escapes); its
  // values' source codes are noted as they are coded.
  void beginRecipe(uint64_t slotBitmap, size_t accesses, bool escapes) {
    recipeFits_ = !escapes && accesses == predicted_.size() && accesses <= kMaxFormulas &&
                  slotBitmap == (uint64_t{1} << accesses) - 1;
    recipeValues_ = 0;
  }
  void noteSource(uint64_t code) {
    if (code > slots_ || recipeValues_ == MemoryRecipe::kMaxValues)
      recipeFits_ = false; // prev's slot: the recipe keeps this record's only
    else
      learned_.sources[recipeValues_++] = static_cast<uint8_t>(code);
  }
  // After a record's memory section is coded: the entry learns its memory, where the section
  // fits a recipe and the record's instruction bytes are the entry's (the second time there), or
  // forgets it. (Before remember(), which forgets it again only where the bytes are new.)
  void learnMemory(History &entry, bool instructionKnown, std::span<const uint8_t> instruction,
                   uint64_t pcBefore);
  // The part of beginMemoryRecord that keeps the changing slots' values (for a decoder that knows
  // them only later).
  [[gnu::noinline]] void keepBefore(const SlotMask &changing);
  // prev's `slot` once the record's registers are applied to state_.
  uint64_t previous(unsigned slot) const;

  StreamHeader header_;
  bool sampled_; // header_.coding is RecordCoding::Sampled
  unsigned slots_;
  unsigned mainCount_;
  unsigned pc_;
  MemoryOperandModel *model_;
  // The first slots_ entries: the last record's slots, and (where kept_ says) the values they had
  // before the last record with memory. Arrays, not vectors: a byte written through a pointer may
  // alias a vector's pointers, which the compiler would then reload. (Sampled coding keeps the
  // slots past mainCount zero.)
  static_assert(kMaxSlots >= kSampleStateSlots);
  std::array<uint64_t, kMaxSlots> state_{};
  std::array<uint64_t, kMaxSlots> before_{};
  SlotMask kept_;
  bool inBlock_ = false; // a keyframe has been made in the current block
  uint64_t lastEscape_ = 0;
  std::vector<History> history_;
  uint32_t generation_ = 1;
  Changes changes_;       // the current record's, for remember()
  MemorySlots predicted_; // beginMemoryRecord()'s answer
  // The memory section being coded, as a recipe (see beginRecipe).
  bool recipeFits_ = false;
  unsigned recipeValues_ = 0;
  MemoryRecipe learned_;
  // Beside history_, entry for entry, where memoryLearned says; empty until something is
  // learned, and apart from history_ so that records without memory do not carry it.
  std::vector<MemoryRecipe> recipes_;
};

class RecordEncoder : public CoderState {
public:
  // Throws std::invalid_argument when the header's layout is unusable.
  RecordEncoder(const StreamHeader &header, MemoryOperandModel *model);

  // Appends `record` to the block payload `out`; throws std::invalid_argument (before writing
  // anything) when it does not fit the layout or the format's limits. `record.gap` is the
  // caller's business (it starts a new block).
  // Inline, with validate(): a record then costs one call, into encodeDelta().
  void encode(const TraceRecord &record, ByteBuffer &out) {
    uint8_t *at = out.reserve(validate(record));
    out.commit(sampled_   ? encodeSample(record, at)
               : inBlock_ ? encodeDelta(record, at)
                          : encodeKeyframe(record, at));
    inBlock_ = true;
  }

private:
  // The most bytes a record without memory encodes to: head, instruction (1-byte length, at most
  // 64 bytes), pc delta, both bitmaps, every slot as a 10-byte value; a keyframe needs less.
  static constexpr size_t kRecordBound =
      1 + 1 + kMaxInstructionBytes + 10 + 10 + 19 + 10 * kMaxSlots;
  static_assert(kRecordBound >= kSampleRecordBound);

  // Checks the record; the most bytes it can encode to.
  size_t validate(const TraceRecord &record) const {
    // The messages out of line: building them inline made this a call with a stack frame.
    if (record.regs.size() != mainCount_ || record.ext.size() != slots_ - mainCount_ ||
        record.instruction.size() > kMaxInstructionBytes ||
        (sampled_ && !(record.instruction.empty() && record.memory.empty()))) [[unlikely]]
      rejectShape(record);
    return record.memory.empty() ? kRecordBound : memoryBound(record);
  }
  // Throws for a record whose registers or instruction do not fit the layout.
  [[noreturn, gnu::cold, gnu::noinline]] void rejectShape(const TraceRecord &record) const;
  // Checks the memory accesses; the most bytes a record with them can encode to.
  static size_t memoryBound(const TraceRecord &record);
  // Each writes at `out` and returns the end of what it wrote.
  uint8_t *encodeSample(const TraceRecord &record, uint8_t *out) {
    if (!inBlock_)
      std::fill_n(state_.begin(), mainCount_, 0);
    return encodeSample_(record.regs.data(), state_.data(), mainCount_, out);
  }
  uint8_t *encodeKeyframe(const TraceRecord &record, uint8_t *out);
  uint8_t *encodeDelta(const TraceRecord &record, uint8_t *out);
  // The memory path, out of line and kept out of encodeDelta's flattening: most records have no
  // memory, and its calls had cost every record stack room and spills (and adding memory as
  // remembered inline, records without memory 4-7 %). beginMemory, before the record's
  // registers are applied: the head bit of the record's memory, as remembered or a section
  // (then asking the model). encodeMemory, after them: its literal values or its section (and
  // the entry learns from that). (A keyframe has no prev to take values from.)
  [[gnu::noinline]] uint8_t beginMemory(const TraceRecord &record, const History &entry,
                                        uint64_t pcBefore, const SlotMask &changing);
  [[gnu::noinline]] uint8_t *encodeMemory(const TraceRecord &record, History &entry,
                                          uint8_t memoryHead, uint64_t pcBefore, uint8_t *out);
  // Whether the entry is pcBefore's and holds the record's instruction bytes: the encoder then
  // does not store them (encodeDelta), which is what the decoder goes by.
  bool instructionKnown(const History &entry, uint64_t pcBefore,
                        std::span<const uint8_t> instruction) const {
    return known(entry, pcBefore) && entry.instructionLength == instruction.size() &&
           sameShort(entry.instruction.data(), instruction.data(), instruction.size());
  }
  uint8_t *encodeSection(const TraceRecord &record, uint8_t *out);
  // The literal values of a record whose memory matchesRecipe().
  uint8_t *encodeRemembered(const TraceRecord &record, const MemoryRecipe &recipe, uint8_t *out);
  uint8_t *encodeEscape(const MemoryAccess &access, bool keyframe, uint8_t *out);
  uint8_t *encodeValue(std::span<const uint8_t> value, bool keyframe, uint8_t *out);

  // Looked up once, not per record.
  ChangedSlotsFn changedSlots_ = changedSlotsForThisCpu(mainCount_, slots_ - mainCount_);
  FindValueFn findValue_ = findValueForThisCpu();
  SampleEncodeFn encodeSample_ = sampleCoderForThisCpu().encode;
};

class RecordDecoder : public CoderState {
public:
  RecordDecoder(const StreamHeader &header, MemoryOperandModel *model);

  // Decodes the next record from the front of `in` and advances `in`. Returns why the bytes are
  // not a valid record (a static text, so nothing is built or destroyed per record), or null;
  // after a problem the block is lost (the next one starts afresh).
  const char *decode(std::span<const uint8_t> &in) {
    record_.gap = false;
    if (sampled_)
      return decodeSample(in);
    record_.memory.clear(); // its accesses' storage kept for the next ones
    // Inline, and deltas return straight through: a record costs one call, into decodeDelta().
    if (inBlock_) [[likely]]
      return decodeDelta(in);
    auto problem = decodeKeyframe(in);
    if (!problem)
      inBlock_ = true;
    return problem;
  }
  // The record last decoded; its storage is reused by the next decode().
  const TraceRecord &record() const { return record_; }
  void markGap(bool gap) { record_.gap = gap; }

private:
  const char *decodeSample(std::span<const uint8_t> &in) {
    if (!inBlock_) {
      std::fill_n(state_.begin(), mainCount_, 0);
      std::fill(record_.regs.begin(), record_.regs.end(), 0);
    }
    if (const char *problem = decodeSample_(in, state_.data(), record_.regs.data(), mainCount_))
      return problem;
    inBlock_ = true;
    return nullptr;
  }
  const char *decodeKeyframe(std::span<const uint8_t> &in);
  const char *decodeDelta(std::span<const uint8_t> &in);
  // Out of line like the encoder's: inlined, the memory path doubled decodeDelta's code and cost
  // records without memory 3 % more instructions. beginMemory also checks the memory bits of
  // the head, so that records without memory need not.
  [[gnu::noinline]] const char *beginMemory(uint8_t head, const History &entry, uint64_t pcBefore);
  [[gnu::noinline]] const char *decodeMemory(std::span<const uint8_t> &in, uint8_t head,
                                             History &entry, uint64_t pcBefore);
  // Whether the entry is pcBefore's and the record did not store its instruction bytes: then
  // they are the entry's (the encoder's instructionKnown, as the head tells it).
  bool instructionKnown(const History &entry, uint64_t pcBefore, uint8_t head) const {
    return known(entry, pcBefore) && !(head & kInstructionFollows);
  }
  const char *decodeSection(std::span<const uint8_t> &in);
  // The values of a record's accesses as remembered (beginMemory added the accesses).
  const char *decodeRemembered(std::span<const uint8_t> &in, const MemoryRecipe &recipe);
  const char *decodeEscapes(std::span<const uint8_t> &in, bool keyframe, uint64_t count);
  bool decodeValue(std::span<const uint8_t> &in, uint32_t size, bool keyframe,
                   std::vector<uint8_t> &value);
  // A value of `size` bytes from this record's slots from `slot` on, or prev's; false when they
  // cannot hold it.
  bool copySlots(uint64_t slot, bool fromPrevious, uint32_t size,
                 std::vector<uint8_t> &value) const;
  void setSlot(unsigned slot, uint64_t value) {
    state_[slot] = value;
    if (slot < mainCount_) [[likely]]
      record_.regs[slot] = value;
    else
      record_.ext[slot - mainCount_] = value;
  }
  // The next access of record_.memory, in the storage of an earlier record's; its values are
  // the caller's to set (those it does not access are empty).
  MemoryAccess &addAccess(uint64_t address, uint32_t size, bool read, bool write);

  TraceRecord record_; // mirrors state_ after every successful decode
  SampleDecodeFn decodeSample_ = sampleCoderForThisCpu().decode;
  // Head bits this stream's version does not have.
  uint8_t rejectedHeadBits_ = header_.version >= 3 ? 0 : kMemoryRemembered;
};

} // namespace strobe
