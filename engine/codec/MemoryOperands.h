// The one thing the diff-record codec needs to know about instructions: which memory an instruction
// accesses. Spec 001 stores memory operand values without their addresses; encoder and decoder both
// recompute the addresses from the instruction bytes and the registers before it ran, so both must
// ask the same model. engine/isa implements it with Capstone; tests use a fake.
#pragma once

#include <algorithm>
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

// At most N items in storage of a fixed size: the codec asks the model at every record with
// memory, on both sides, and a vector per question had cost an allocation each time.
template <typename T, unsigned N> class FixedList {
public:
  // Whether another item fits; the caller treats one that does not as unpredictable.
  bool add(const T &item) {
    if (count_ == N)
      return false;
    items_[count_++] = item;
    return true;
  }
  void clear() { count_ = 0; }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const T &operator[](size_t k) const { return items_[k]; }
  const T *begin() const { return items_.data(); }
  const T *end() const { return items_.data() + count_; }

private:
  std::array<T, N> items_{};
  unsigned count_ = 0;
};

// An instruction's slots; more than kMaxModelSlots make it unpredictable (its accesses are
// escapes).
inline constexpr unsigned kMaxModelSlots = 32;
using MemorySlots = FixedList<MemorySlot, kMaxModelSlots>;

// How an index register is widened before scaling (AArch64 register offsets: [x1, w2, sxtw #2]).
enum class IndexExtend : uint8_t {
  None, // the full 64-bit register
  Uxtw, // low 32 bits, zero-extended
  Sxtw, // low 32 bits, sign-extended
};

// One access of an instruction, as a formula over the registers before it ran:
//   address = [segment] + truncated to 32 bits if address32 ([base] + extend([index]) * scale
//             + displacement)
// Registers are indices in registerTable order (kNoRegister: none); a pc-relative operand's pc
// is folded into the displacement, so a formula belongs to one instruction at one address.
struct AccessFormula {
  static constexpr uint8_t kNoRegister = 0xff;

  uint64_t displacement = 0;
  uint32_t scale = 1;
  uint32_t size = 0; // bytes
  uint8_t base = kNoRegister;
  uint8_t index = kNoRegister;
  uint8_t segment = kNoRegister;
  IndexExtend indexExtend = IndexExtend::None;
  bool address32 = false; // x86-64 address-size prefix
  bool read = false;
  bool write = false;

  // `regs`: registerTable order; a register missing from it reads as zero.
  uint64_t address(std::span<const uint64_t> regs) const {
    const size_t count = std::min<size_t>(regs.size(), kNoRegister);
    auto reg = [&](uint8_t r) -> uint64_t { return r < count ? regs[r] : 0; };
    uint64_t offset = reg(index);
    if (indexExtend == IndexExtend::Uxtw)
      offset = static_cast<uint32_t>(offset);
    else if (indexExtend == IndexExtend::Sxtw)
      offset = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(offset)));
    uint64_t sum = reg(base) + offset * scale + displacement;
    if (address32)
      sum = static_cast<uint32_t>(sum);
    return reg(segment) + sum;
  }
  MemorySlot slot(std::span<const uint64_t> regs) const {
    return {address(regs), size, read, write};
  }
};

// An instruction's accesses as formulas. Most instructions access memory once, push [x] and
// call [x] twice; one with more has none (its accesses are predicted each time).
inline constexpr unsigned kMaxFormulas = 2;
using AccessFormulas = FixedList<AccessFormula, kMaxFormulas>;

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

  // The accesses of the instruction `bytes` at `pc` as formulas over the registers before it,
  // the same at every execution of it, into `out` (cleared first), for callers that meet it again
  // and again: the codec evaluates them at a loop's records instead of asking predict(). False:
  // none (its accesses do not follow from the instruction and the registers alone, such as a rep
  // string instruction's, or do not fit `out`). Must be deterministic, like predict(), and give
  // the addresses predict() gives.
  virtual bool formulas(std::span<const uint8_t> bytes, uint64_t pc, AccessFormulas &out) {
    (void)bytes;
    (void)pc;
    out.clear();
    return false;
  }

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
