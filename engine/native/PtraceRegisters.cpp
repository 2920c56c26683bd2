#include "native/PtraceRegisters.h"

#include "native/ExtendedRegsets.h"

#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <cstring>

namespace strobe {

#if defined(__x86_64__) || defined(__aarch64__)
namespace {

#if defined(__x86_64__)
constexpr Isa kHostIsa = Isa::X86_64;
#else
constexpr Isa kHostIsa = Isa::AArch64;
#endif

// Reads register set `type` of `thread` into `to` (PTRACE_GETREGSET, which truncates a set to
// `room`); the bytes read, 0 when it cannot.
size_t getRegset(pid_t thread, unsigned type, void *to, size_t room) {
  iovec io{to, room};
  // ptrace() is variadic and reads its address argument as a pointer.
  const auto set = reinterpret_cast<void *>(static_cast<uintptr_t>(type));
  return ptrace(PTRACE_GETREGSET, thread, set, &io) == 0 ? io.iov_len : 0;
}

// The kernel's user_regs_struct in `prstatus`, when that is a register set of `isa` on this host.
bool hostRegisters(Isa isa, std::span<const uint8_t> prstatus, user_regs_struct &r) {
  if (isa != kHostIsa || prstatus.size() != sizeof r)
    return false;
  std::memcpy(&r, prstatus.data(), sizeof r);
  return true;
}

} // namespace

bool ptraceRegisters(Isa isa, uint64_t tid, std::vector<uint64_t> &regs) {
  user_regs_struct r{};
  const size_t bytes =
      isa == kHostIsa ? getRegset(static_cast<pid_t>(tid), NT_PRSTATUS, &r, sizeof r) : 0;
  return bytes > 0 &&
         registersFromPrStatus(isa, {reinterpret_cast<const uint8_t *>(&r), bytes}, regs);
}

bool ptraceExtended(Isa isa, uint64_t tid, std::vector<uint64_t> &values) {
  // Room for either host's NT_PRSTATUS: x86-64 216 bytes, AArch64 272.
  alignas(16) uint8_t prstatus[512], extended[kExtendedRegsetBytes];
  const auto thread = static_cast<pid_t>(tid);
  const size_t status =
      isa == kHostIsa ? getRegset(thread, NT_PRSTATUS, prstatus, sizeof prstatus) : 0;
  if (status == 0)
    return false;
  const auto fromThread = [thread](unsigned type, uint8_t *to, size_t room) {
    return getRegset(thread, type, to, room);
  };
  const size_t bytes = readExtendedRegsets(fromThread, extended);
  return extendedFromRegsets(isa, {prstatus, status}, {extended, bytes}, values);
}
#endif

#if defined(__x86_64__)

namespace {

// In the standard-format XSAVE area: the bitmap of components not in their initial state, and
// the AVX component (the upper halves of ymm0-15), whose bit in it is 2.
constexpr size_t kXstateBvOffset = 512;
constexpr size_t kAvxOffset = 576;
constexpr uint64_t kAvxFeature = 1u << 2;

// The x87 tag word as both debuggers show it (two bits per physical register: valid, zero,
// special, empty) from FXSAVE's abridged one (a bit per register: not empty), classifying the
// value each register holds as the FPU would.
uint64_t fullTagWord(const user_fpregs_struct &fp) {
  const unsigned top = (fp.swd >> 11) & 7;
  uint64_t tags = 0;
  for (unsigned physical = 0; physical < 8; ++physical) {
    unsigned tag = 3; // empty
    if (fp.ftw & (1u << physical)) {
      const unsigned *st = &fp.st_space[((physical - top) & 7) * 4]; // st(i) is physical top+i
      const unsigned exponent = st[2] & 0x7fff;
      const bool integer = st[1] & 0x80000000u;
      const bool fraction = st[0] != 0 || (st[1] & 0x7fffffffu) != 0;
      if (exponent == 0x7fff)
        tag = 2;
      else if (exponent == 0)
        tag = integer || fraction ? 2 : 1;
      else
        tag = integer ? 0 : 2;
    }
    tags |= uint64_t{tag} << (2 * physical);
  }
  return tags;
}

} // namespace

bool registersFromPrStatus(Isa isa, std::span<const uint8_t> prstatus,
                           std::vector<uint64_t> &regs) {
  user_regs_struct r;
  if (!hostRegisters(isa, prstatus, r))
    return false;
  regs = {r.rax, r.rbx, r.rcx, r.rdx,    r.rsi,     r.rdi,     r.rbp,
          r.rsp, r.r8,  r.r9,  r.r10,    r.r11,     r.r12,     r.r13,
          r.r14, r.r15, r.rip, r.eflags, r.fs_base, r.gs_base, r.orig_rax};
  return true;
}

bool extendedFromRegsets(Isa isa, std::span<const uint8_t> prstatus,
                         std::span<const uint8_t> extended, std::vector<uint64_t> &values) {
  user_regs_struct r;
  user_fpregs_struct fp;
  if (!hostRegisters(isa, prstatus, r) || extended.size() < sizeof fp)
    return false;
  std::memcpy(&fp, extended.data(), sizeof fp);
  values = {r.cs, r.ss, r.ds, r.es, r.fs, r.gs, fp.mxcsr, fp.cwd, fp.swd};
  const auto pairs = [&values](const unsigned *words, unsigned count) {
    for (unsigned i = 0; i < count; ++i, words += 4) {
      values.push_back(words[0] | uint64_t{words[1]} << 32);
      values.push_back(words[2] | uint64_t{words[3]} << 32);
    }
  };
  pairs(fp.xmm_space, 16);
  values.push_back(fullTagWord(fp));
  const size_t st0 = values.size();
  pairs(fp.st_space, 8);
  for (size_t i = st0 + 1; i < values.size(); i += 2)
    values[i] &= 0xffff; // 10 of the 16 bytes FXSAVE keeps each in
  // The AVX state is in the XSAVE area when XSTATE_BV says so; otherwise in its initial state,
  // zeros (also where the kernel gave no XSAVE area, or one without AVX).
  unsigned avx[64] = {};
  if (uint64_t features; extended.size() >= kAvxOffset + sizeof avx) {
    std::memcpy(&features, extended.data() + kXstateBvOffset, sizeof features);
    if (features & kAvxFeature)
      std::memcpy(avx, extended.data() + kAvxOffset, sizeof avx);
  }
  pairs(avx, 16);
  return true;
}

#elif defined(__aarch64__)

bool registersFromPrStatus(Isa isa, std::span<const uint8_t> prstatus,
                           std::vector<uint64_t> &regs) {
  user_regs_struct r;
  if (!hostRegisters(isa, prstatus, r))
    return false;
  regs.assign(r.regs, r.regs + 31);
  regs.push_back(r.sp);
  regs.push_back(r.pc);
  regs.push_back(r.pstate);
  return true;
}

bool extendedFromRegsets(Isa isa, std::span<const uint8_t> prstatus,
                         std::span<const uint8_t> extended, std::vector<uint64_t> &values) {
  user_regs_struct r;
  user_fpsimd_struct fp;
  if (!hostRegisters(isa, prstatus, r) || extended.size() < sizeof fp)
    return false;
  std::memcpy(&fp, extended.data(), sizeof fp);
  values.clear();
  for (const __uint128_t &v : fp.vregs) {
    values.push_back(static_cast<uint64_t>(v));
    values.push_back(static_cast<uint64_t>(v >> 64));
  }
  values.push_back(fp.fpsr);
  values.push_back(fp.fpcr);
  uint64_t tpidr = 0; // a kernel without NT_ARM_TLS: as the debuggers, which then lack it
  if (extended.size() >= sizeof fp + sizeof tpidr)
    std::memcpy(&tpidr, extended.data() + sizeof fp, sizeof tpidr);
  values.push_back(tpidr);
  return true;
}

#else

bool registersFromPrStatus(Isa, std::span<const uint8_t>, std::vector<uint64_t> &) { return false; }
bool extendedFromRegsets(Isa, std::span<const uint8_t>, std::span<const uint8_t>,
                         std::vector<uint64_t> &) {
  return false;
}
bool ptraceRegisters(Isa, uint64_t, std::vector<uint64_t> &) { return false; }
bool ptraceExtended(Isa, uint64_t, std::vector<uint64_t> &) { return false; }

#endif

} // namespace strobe
