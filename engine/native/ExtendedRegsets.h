// The kernel register sets a thread's extended registers (registerTable(isa).ext) come from, read
// into one block that extendedFromRegsets() takes apart. Header-only: lldb-server's tap library
// reads them with its own ptrace, and links nothing else of strobe's.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>

namespace strobe {

// x86-64: the XSAVE area (NT_X86_XSTATE, standard format) as far as the end of the AVX state:
// the FXSAVE image of x87 and SSE (512 bytes), the XSAVE header (64), the upper halves of
// ymm0-15 (256); just the FXSAVE image (NT_PRFPREG) where the kernel has no XSAVE area.
// AArch64: FPSIMD (NT_PRFPREG, 528 bytes), then TPIDR_EL0 (NT_ARM_TLS, 8).
inline constexpr size_t kExtendedRegsetBytes = 832;

// Reads the block of the host's ISA into `to` (kExtendedRegsetBytes of room) with
// `getRegset(type, to, room)`, which returns the bytes of register set `type` it read (at most
// `room`, as PTRACE_GETREGSET truncates a set), 0 when it cannot. The block's size, or 0.
template <class GetRegset> size_t readExtendedRegsets(GetRegset getRegset, uint8_t *to) {
#if defined(__x86_64__)
  if (size_t bytes = getRegset(NT_X86_XSTATE, to, kExtendedRegsetBytes); bytes >= 512)
    return bytes;
  return getRegset(NT_PRFPREG, to, 512);
#elif defined(__aarch64__)
  const size_t fpsimd = getRegset(NT_PRFPREG, to, 528);
  if (fpsimd != 528)
    return fpsimd;
  return fpsimd + getRegset(NT_ARM_TLS, to + fpsimd, 8);
#else
  (void)getRegset;
  (void)to;
  return 0;
#endif
}

} // namespace strobe
