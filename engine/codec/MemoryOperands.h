// The one thing the diff-record codec needs to know about instructions: which memory an instruction
// accesses. Spec 001 stores memory operand values without their addresses; encoder and decoder both
// recompute the addresses from the instruction bytes and the registers before it ran, so both must
// ask the same model. engine/isa implements it with Capstone; tests use a fake.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace strobe {

struct MemorySlot {
  uint64_t address = 0;
  uint32_t size = 0; // bytes
  bool read = false;
  bool write = false;
};

// More slots than this: the instruction is treated as unpredictable (its accesses are escapes).
inline constexpr unsigned kMaxModelSlots = 32;

// An instruction's slots, in storage of a fixed size: the codec asks for them at every record
// with memory, on both sides, and a vector per question had cost an allocation each time.
class MemorySlots {
public:
  // Whether another slot fits; one that does not makes the instruction unpredictable.
  bool add(const MemorySlot &slot) {
    if (count_ == items_.size())
      return false;
    items_[count_++] = slot;
    return true;
  }
  void clear() { count_ = 0; }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const MemorySlot &operator[](size_t k) const { return items_[k]; }
  const MemorySlot *begin() const { return items_.data(); }
  const MemorySlot *end() const { return items_.data() + count_; }

private:
  std::array<MemorySlot, kMaxModelSlots> items_;
  unsigned count_ = 0;
};

class MemoryOperandModel {
public:
  virtual ~MemoryOperandModel() = default;
  // The memory the instruction `bytes` at `pc` accesses, computed from the registers BEFORE it
  // ran (registerTable order, followed by the ext slots when the caller has them), into `out`
  // (cleared first). False: not predictable (gathers, xsave, rep movs, more slots than `out`
  // holds, ...) -> the codec stores such accesses in escape form. Must be deterministic: the
  // decoder calls it with exactly the encoder's arguments.
  virtual bool predict(std::span<const uint8_t> bytes, uint64_t pc, std::span<const uint64_t> regs,
                       MemorySlots &out) = 0;

  // predict() for callers outside the codec's hot path; nullopt: not predictable.
  std::optional<std::vector<MemorySlot>> slots(std::span<const uint8_t> bytes, uint64_t pc,
                                               std::span<const uint64_t> regs) {
    MemorySlots found;
    if (!predict(bytes, pc, regs, found))
      return std::nullopt;
    return std::vector<MemorySlot>(found.begin(), found.end());
  }
};

} // namespace strobe
