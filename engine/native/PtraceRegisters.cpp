#include "native/PtraceRegisters.h"

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

// ptrace() is variadic and reads its address argument as a pointer.
void *regset(uintptr_t type) { return reinterpret_cast<void *>(type); }

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
  iovec io{&r, sizeof r};
  if (isa != kHostIsa ||
      ptrace(PTRACE_GETREGSET, static_cast<pid_t>(tid), regset(NT_PRSTATUS), &io) != 0)
    return false;
  return registersFromPrStatus(isa, {reinterpret_cast<const uint8_t *>(&r), io.iov_len}, regs);
}

bool ptraceExtended(Isa isa, uint64_t tid, std::vector<uint64_t> &values) {
  // Room for either host's sets: x86-64 216 and 512 bytes, AArch64 272 and 528.
  alignas(16) uint8_t prstatus[512], prfpreg[1024];
  iovec status{prstatus, sizeof prstatus}, fp{prfpreg, sizeof prfpreg};
  const auto thread = static_cast<pid_t>(tid);
  if (isa != kHostIsa || ptrace(PTRACE_GETREGSET, thread, regset(NT_PRSTATUS), &status) != 0 ||
      ptrace(PTRACE_GETREGSET, thread, regset(NT_PRFPREG), &fp) != 0)
    return false;
  return extendedFromRegsets(isa, {prstatus, status.iov_len}, {prfpreg, fp.iov_len}, values);
}
#endif

#if defined(__x86_64__)

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
                         std::span<const uint8_t> prfpreg, std::vector<uint64_t> &values) {
  user_regs_struct r;
  user_fpregs_struct fp;
  if (!hostRegisters(isa, prstatus, r) || prfpreg.size() != sizeof fp)
    return false;
  std::memcpy(&fp, prfpreg.data(), sizeof fp);
  values = {r.cs, r.ss, r.ds, r.es, r.fs, r.gs, fp.mxcsr, fp.cwd, fp.swd};
  for (unsigned i = 0; i < 16; ++i) {
    const unsigned *words = &fp.xmm_space[i * 4];
    values.push_back(words[0] | uint64_t{words[1]} << 32);
    values.push_back(words[2] | uint64_t{words[3]} << 32);
  }
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
                         std::span<const uint8_t> prfpreg, std::vector<uint64_t> &values) {
  user_regs_struct r;
  user_fpsimd_struct fp;
  if (!hostRegisters(isa, prstatus, r) || prfpreg.size() != sizeof fp)
    return false;
  std::memcpy(&fp, prfpreg.data(), sizeof fp);
  values.clear();
  for (const __uint128_t &v : fp.vregs) {
    values.push_back(static_cast<uint64_t>(v));
    values.push_back(static_cast<uint64_t>(v >> 64));
  }
  values.push_back(fp.fpsr);
  values.push_back(fp.fpcr);
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
