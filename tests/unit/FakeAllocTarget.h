// A fake libc for AllocTracker tests: allocator functions made of hand-assembled x86-64 code (so
// the tracker's disassembly finds their exits), breakpoints that tests hit on a thread's behalf,
// and threads whose registers and stack the test sets before each hit.
//
// Layout (every address worked out by hand from the encodings in the comments):
//   0x10000 malloc         push rbx; test rdi,rdi; je +2; pop rbx; ret (0x10007); pop rbx; ret
//   (0x10009) 0x10100 free           test rdi,rdi; je +1; nop; ret (0x10106) 0x10200 realloc test
//   rdi,rdi; je malloc (tail jump); ret (0x10209) 0x10300 calloc         test rsi,rsi; je +5; jmp
//   memset@plt (0x10305); ret (0x1030a) 0x10400 _Znwm          sub rsp,8; call malloc; add rsp,8;
//   ret (0x1040d) 0x10500 _ZdlPv         jmp free 0x10600 posix_memalign xor eax,eax; ret (0x10602)
//   0x10700 memalign (= aligned_alloc) jmp _mid_memalign
//   0x10800 _mid_memalign  xor eax,eax; ret (0x10802)
//   0x10900 reallocarray   jmp realloc@plt
//   0x10a00 mmap           mov eax,9; syscall; ret (0x10a07)
//   0x10b00 munmap         mov eax,11; syscall; ret (0x10b07)
//   0x10c00 mremap         mov eax,25; syscall; ret (0x10c07)
//   0x10d00 _Znam          0x06 (invalid in 64-bit mode) under a symbol without a size: no exit
//   0x10d10 _ZnamRKSt9nothrow_t  jmp _Znwm@plt, a stub not bound yet: no exit the scan can see
//   0x10e00 __memset_avx2_unaligned_erms  mov rax,rdi; ret (0x10e03)
//   0x10f00 memset@plt     endbr64; bnd jmp [rip+0xf0f5] -> slot 0x20000 = 0x10e00
//   0x10f10 realloc@plt    endbr64; bnd jmp [rip+0xf0ed] -> slot 0x20008 = 0x10200
//   0x10f20 _Znwm@plt      endbr64; bnd jmp [rip+0xf0e5] -> slot 0x20010 = 0x10f2b (lazy: itself)
#pragma once

#include "FakeTarget.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace strobe::testing {

class FakeAllocTarget : public FakeTarget {
public:
  static constexpr uint64_t kMalloc = 0x10000, kFree = 0x10100, kRealloc = 0x10200,
                            kCalloc = 0x10300, kNew = 0x10400, kDelete = 0x10500,
                            kPosixMemalign = 0x10600, kMemalign = 0x10700, kMidMemalign = 0x10800,
                            kReallocArray = 0x10900, kMmap = 0x10a00, kMunmap = 0x10b00,
                            kMremap = 0x10c00, kNewArray = 0x10d00, kNewArrayNothrow = 0x10d10,
                            kMemset = 0x10e00, kMemsetPlt = 0x10f00, kReallocPlt = 0x10f10,
                            kNewPlt = 0x10f20;
  static constexpr uint64_t kLibcStart = 0x10000, kLibcEnd = 0x30000;

  struct Thread {
    std::vector<uint64_t> regs = std::vector<uint64_t>(registerTable(Isa::X86_64).regs.size());
    std::vector<uint64_t> stack;
  };

  FakeAllocTarget() {
    moduleTable.push_back({"/lib/libc.so.6", "", kLibcStart, kLibcEnd, kLibcStart});
    function("malloc", kMalloc, {0x53, 0x48, 0x85, 0xff, 0x74, 0x02, 0x5b, 0xc3, 0x5b, 0xc3});
    function("free", kFree, {0x48, 0x85, 0xff, 0x74, 0x01, 0x90, 0xc3});
    function("realloc", kRealloc, {0x48, 0x85, 0xff, 0x0f, 0x84, 0xf7, 0xfd, 0xff, 0xff, 0xc3});
    function("calloc", kCalloc, {0x48, 0x85, 0xf6, 0x74, 0x05, 0xe9, 0xf6, 0x0b, 0x00, 0x00, 0xc3});
    function("_Znwm", kNew,
             {0x48, 0x83, 0xec, 0x08, 0xe8, 0xf7, 0xfb, 0xff, 0xff, 0x48, 0x83, 0xc4, 0x08, 0xc3});
    function("_ZdlPv", kDelete, {0xe9, 0xfb, 0xfb, 0xff, 0xff});
    function("posix_memalign", kPosixMemalign, {0x31, 0xc0, 0xc3});
    function("memalign", kMemalign, {0xe9, 0xfb, 0x00, 0x00, 0x00});
    resolvable["aligned_alloc"].push_back(kMemalign);
    function("_mid_memalign", kMidMemalign, {0x31, 0xc0, 0xc3});
    function("reallocarray", kReallocArray, {0xe9, 0x0b, 0x06, 0x00, 0x00});
    function("mmap", kMmap, {0xb8, 0x09, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3});
    function("munmap", kMunmap, {0xb8, 0x0b, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3});
    function("mremap", kMremap, {0xb8, 0x19, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3});
    function("_Znam", kNewArray, {0x06});
    symbolTable[kNewArray].size = 0;
    function("_ZnamRKSt9nothrow_t", kNewArrayNothrow, {0xe9, 0x0b, 0x02, 0x00, 0x00});
    function("__memset_avx2_unaligned_erms", kMemset, {0x48, 0x89, 0xf8, 0xc3});
    function("*ABS*+0x9c840@plt", kMemsetPlt,
             {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xf5, 0xf0, 0x00, 0x00, 0x90, 0x90, 0x90,
              0x90, 0x90});
    function("realloc@plt", kReallocPlt,
             {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xed, 0xf0, 0x00, 0x00, 0x90, 0x90, 0x90,
              0x90, 0x90});
    write64(0x20000, kMemset);
    write64(0x20008, kRealloc);
    function("_Znwm@plt", kNewPlt,
             {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xe5, 0xf0, 0x00, 0x00, 0x90, 0x90, 0x90,
              0x90, 0x90});
    write64(0x20010, kNewPlt + 11);
  }

  // Test-controlled state.
  std::map<std::string, std::vector<uint64_t>> resolvable;
  // Readable memory: the library's code and data, zero where nothing was written.
  static constexpr uint64_t kImageStart = kLibcStart, kImageEnd = 0x40000;
  std::vector<uint8_t> image = std::vector<uint8_t>(kImageEnd - kImageStart);
  std::map<uint64_t, Thread> threadState;
  std::map<uint64_t, BreakpointHandler> breakpoints;
  std::set<uint64_t> refused; // addresses where insertBreakpoint fails
  size_t removedBreakpoints = 0;

  // A debugger command deletes the breakpoint at `address` (LLDB's `breakpoint delete`).
  void deleteBehindStrobe(uint64_t address) { breakpoints.erase(address); }

  void write(uint64_t address, const std::vector<uint8_t> &bytes) {
    std::copy(bytes.begin(), bytes.end(), image.begin() + (address - kImageStart));
  }
  void write64(uint64_t address, uint64_t value) {
    std::vector<uint8_t> bytes(8);
    for (size_t i = 0; i < 8; ++i)
      bytes[i] = static_cast<uint8_t>(value >> (8 * i));
    write(address, bytes);
  }

  // The thread calls `entry` from `callers` (return addresses, innermost first) with `sp` at
  // entry; the entry breakpoint fires if there is one.
  void enter(uint64_t tid, uint64_t entry, uint64_t sp, std::vector<uint64_t> args,
             std::vector<uint64_t> callers = {0x401010, 0x401200}) {
    const RegisterTable &t = registerTable(Isa::X86_64);
    Thread &thread = threadState[tid];
    for (size_t i = 0; i < args.size(); ++i)
      thread.regs[t.argumentRegs[i]] = args[i];
    thread.stack = {entry};
    thread.stack.insert(thread.stack.end(), callers.begin(), callers.end());
    hit(tid, entry, sp);
  }

  // The thread reaches the exit instruction `site` with `sp` and `result` in rax.
  void leave(uint64_t tid, uint64_t site, uint64_t sp, uint64_t result) {
    Thread &thread = threadState[tid];
    thread.regs[registerTable(Isa::X86_64).returnReg] = result;
    thread.stack.at(0) = site;
    hit(tid, site, sp);
  }

  // Runs the breakpoint at `address` for `tid`, if one is planted; false when none is.
  bool hit(uint64_t tid, uint64_t address, uint64_t sp) {
    const RegisterTable &t = registerTable(Isa::X86_64);
    Thread &thread = threadState[tid];
    thread.regs[t.pc] = address;
    thread.regs[t.sp] = sp;
    auto it = breakpoints.find(address);
    if (it == breakpoints.end())
      return false;
    BreakpointHandler handler = it->second; // the handler may remove its own breakpoint
    handler(tid);
    return true;
  }

  bool readThread(uint64_t tid, unsigned depth, ThreadSnapshot &out) override {
    auto it = threadState.find(tid);
    if (it == threadState.end())
      return false;
    out.tid = tid;
    out.regs = it->second.regs;
    out.stack.assign(it->second.stack.begin(),
                     it->second.stack.begin() + std::min<size_t>(depth, it->second.stack.size()));
    return true;
  }
  std::vector<uint8_t> readMemory(uint64_t address, size_t size) override {
    if (address < kImageStart || address + size > kImageEnd)
      return {};
    auto from = image.begin() + (address - kImageStart);
    return {from, from + size};
  }
  std::vector<uint64_t> resolve(std::string_view location) override {
    auto it = resolvable.find(std::string(location));
    return it == resolvable.end() ? std::vector<uint64_t>{} : it->second;
  }
  std::unique_ptr<Breakpoint> insertBreakpoint(uint64_t address,
                                               BreakpointHandler handler) override {
    if (refused.count(address))
      return nullptr;
    breakpoints[address] = std::move(handler);
    return std::make_unique<Planted>(*this, address);
  }

private:
  struct Planted : Breakpoint {
    FakeAllocTarget &target;
    uint64_t address;
    Planted(FakeAllocTarget &t, uint64_t a) : target(t), address(a) {}
    bool present() const override { return target.breakpoints.count(address) != 0; }
    ~Planted() override {
      target.breakpoints.erase(address);
      ++target.removedBreakpoints;
    }
  };

  void function(const std::string &name, uint64_t address, std::vector<uint8_t> code) {
    symbolTable[address] = {name, address, code.size(), "", 0, {}};
    write(address, code);
    resolvable[name].push_back(address);
  }
};

} // namespace strobe::testing
