// Unwinds one frame with the DWARF call frame information of .eh_frame (found through
// .eh_frame_hdr), the information GDB's and LLDB's own unwinders use for such code. Anything it
// does not model (no CFI, an unusual encoding, an unknown expression operator) answers Unknown,
// and the caller falls back to the debugger.
#pragma once

#include "native/ElfImage.h"
#include "target/Isa.h"

#include <array>
#include <bitset>
#include <cstdint>
#include <functional>

namespace strobe {

// A frame's registers in DWARF numbering (x86-64: 0-15 general registers, 16 rip; AArch64:
// x0-x30, 31 sp).
struct FrameRegs {
  static constexpr unsigned kCount = 33;
  std::array<uint64_t, kCount> value{};
  std::bitset<kCount> known;

  void set(unsigned reg, uint64_t v) {
    value[reg] = v;
    known.set(reg);
  }
};

// Reads inferior memory; false when the address is not readable.
using ReadMemory = std::function<bool(uint64_t address, void *out, size_t size)>;

class CfiUnwinder {
public:
  explicit CfiUnwinder(Isa isa);

  enum class Result { Caller, Outermost, Unknown };
  struct Frame {
    FrameRegs regs;
    uint64_t pc = 0;
    uint64_t cfa = 0;    // set by step() for the frame it unwound
    bool exactPc = true; // pc is where the frame stopped, not a return address
  };

  // Unwinds `frame`, whose code is in `image` loaded at `bias`, into its caller.
  Result step(ElfImage &image, uint64_t bias, Frame &frame, Frame &caller,
              const ReadMemory &read) const;

private:
  unsigned sp_;       // DWARF number of the stack pointer
  unsigned pcColumn_; // where a frame's own pc is kept (x86-64 rip; AArch64 has 32 for it)
};

// The engine's registers (registerTable(isa).regs order) as DWARF-numbered frame registers.
FrameRegs frameRegisters(Isa isa, const std::vector<uint64_t> &regs);

} // namespace strobe
