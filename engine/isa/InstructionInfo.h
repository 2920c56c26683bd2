// What the engine needs to know about one machine instruction beyond its text: how long it is,
// how it changes control flow (basic blocks, loops) and which memory it accesses (the diff-record
// codec stores memory values without addresses, spec 001, so it must recompute them).
#pragma once

#include "codec/MemoryOperands.h"
#include "isa/CapstoneHandle.h"
#include "target/Isa.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace strobe {

enum class BranchKind : uint8_t {
  None,            // execution continues with the next instruction
  Jump,            // direct, unconditional
  ConditionalJump, // direct; falls through when not taken (jcc, loop, jrcxz; b.cond, cbz, tbz)
  IndirectJump,    // target in a register or in memory (jmp rax, jmp [rip+x]; br x16)
  Call,            // direct
  IndirectCall,    // call rax, call [rax]; blr x8
  Return,          // ret; AArch64 ret xN
  Syscall,         // syscall, int 0x80; svc: like a call, execution resumes after it
};

// A call, direct or indirect: it returns to the instruction after it.
constexpr bool isCall(BranchKind kind) {
  return kind == BranchKind::Call || kind == BranchKind::IndirectCall;
}

// How an AArch64 access updates its base register.
enum class Writeback : uint8_t {
  None,
  PreIndex,  // [xn, #imm]!: accesses xn + imm, then xn += imm
  PostIndex, // [xn], #imm:  accesses xn, then xn += imm
};

// One memory access of an instruction, as an address formula over the pre-execution registers:
//   address = [segment base] + [base] + extend([index]) * scale + displacement
// where a pc-relative operand has the pc as its base: the next instruction's address on x86-64
// (rip), the instruction's own address on AArch64 (literal loads). A post-index access uses the
// base alone; its displacement is only the amount written back. Register numbers are indices in
// registerTable(isa).regs.
struct MemoryOperand {
  std::optional<unsigned> base;
  std::optional<unsigned> index;
  IndexExtend indexExtend = IndexExtend::None;
  uint32_t scale = 1;
  int64_t displacement = 0;
  std::optional<unsigned> segmentBase; // x86-64 fs: / gs: -> index of fs_base / gs_base
  bool pcRelative = false;
  bool address32 = false; // x86-64 address-size prefix: the sum is truncated to 32 bits
  uint32_t size = 0;      // bytes accessed
  bool read = false;
  bool write = false;
  Writeback writeback = Writeback::None;
  bool implicit = false; // the stack slot of push/pop/call/ret/leave/pushf/popf

  friend bool operator==(const MemoryOperand &, const MemoryOperand &) = default;
};

struct InstructionInfo {
  Isa isa = Isa::X86_64;
  uint64_t address = 0;
  unsigned length = 0;
  BranchKind kind = BranchKind::None;
  std::optional<uint64_t> target; // destination of a direct jump, conditional jump or call
  // Explicit operands in Capstone's operand order, then the implicit stack access.
  std::vector<MemoryOperand> memory;
  // Accesses the operand model cannot predict from the registers: gathers and scatters,
  // xsave/fxsave and friends, rep string instructions, bit tests with a register bit offset,
  // masked vector accesses, AArch64 SIMD structure loads/stores (ld1..ld4, st1..st4), dc zva.
  // `memory` is then incomplete and must not be trusted, except for `repeated` instructions.
  bool unusual = false;
  // A rep/repe/repne string instruction (also `unusual`): `memory` holds the accesses of one
  // iteration, [rsi] and/or [rdi], which is what one single step executes.
  bool repeated = false;
};

// How the memory operand model treats rep string instructions. A periodic sample may stop a
// thread anywhere in their iterations, so what the next run of them touches is unknown; but a
// single step executes exactly one iteration (the trap flag traps after each one), or none when
// the count register (RegisterTable::repeatCount) is zero.

enum class RepeatedStrings : uint8_t {
  Unusual,             // slots() returns nullopt: for periodic samples
  OneIterationPerStep, // slots() returns one iteration's accesses: for single-step traces
};

// The formula of `op`'s address in the instruction `insn` (its pc and a post-index access's
// displacement resolved).
AccessFormula formulaOf(const MemoryOperand &op, const InstructionInfo &insn);

// The address `op` designates for the instruction `insn` when the registers held `regs` just
// before it ran. `regs` is in registerTable order; a register missing from it reads as zero.
inline uint64_t effectiveAddress(const MemoryOperand &op, const InstructionInfo &insn,
                                 std::span<const uint64_t> regs) {
  return formulaOf(op, insn).address(regs);
}

// Decodes instructions with Capstone. Keeps the last few thousand decoded instructions, keyed by
// address and checked against their bytes, because traces decode the same loop bodies over and
// over. Not thread-safe (one Capstone handle, buffer and cache).
class InstructionDecoder final : public MemoryOperandModel {
public:
  // Throws std::runtime_error when Capstone cannot open.
  explicit InstructionDecoder(Isa isa, RepeatedStrings repeated = RepeatedStrings::Unusual);
  ~InstructionDecoder() override;
  InstructionDecoder(const InstructionDecoder &) = delete;
  InstructionDecoder &operator=(const InstructionDecoder &) = delete;

  Isa isa() const { return isa_; }

  // The instruction at the start of `bytes`, which sit at `pc`; nullopt when they do not begin
  // with a valid instruction.
  std::optional<InstructionInfo> decode(std::span<const uint8_t> bytes, uint64_t pc);

  // MemoryOperandModel: decode(bytes, pc), then effectiveAddress of every operand; false for
  // undecodable or unusual instructions (rep string instructions: see RepeatedStrings). AArch64
  // ldp/stp give one slot covering both registers.
  bool predict(std::span<const uint8_t> bytes, uint64_t pc, std::span<const uint64_t> regs,
               MemorySlots &out) override;
  // MemoryOperandModel: the formulas of predict()'s slots; none for unusual instructions (rep
  // string instructions included: their accesses depend on the count).
  bool formulas(std::span<const uint8_t> bytes, uint64_t pc, AccessFormulas &out) override;

private:
  static constexpr size_t kCacheEntries = 4096;
  static constexpr size_t kMaxInstructionBytes = 15;
  struct CacheEntry {
    std::optional<InstructionInfo> info;
    std::array<uint8_t, kMaxInstructionBytes> bytes{};
  };

  std::optional<InstructionInfo> decodeUncached(std::span<const uint8_t> bytes, uint64_t pc);
  const InstructionInfo *lookup(std::span<const uint8_t> bytes, uint64_t pc);

  Isa isa_;
  RepeatedStrings repeated_;
  std::vector<CacheEntry> cache_;
  CapstoneHandle capstone_;
};

} // namespace strobe
