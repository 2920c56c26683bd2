// The memory operand model against a real process: a forked child runs a small workload (pointer
// chasing, arrays, a thread-local, a global, calls and returns, memcpy, snprintf, qsort) and then
// its way out through libc; the parent single-steps it with ptrace and checks, at every
// instruction, that the addresses predicted from the pre-step registers are the ones the
// instruction used:
//  - every predicted slot is readable;
//  - memory in and around every slot changes only where a store was predicted (a store aimed
//    elsewhere nearby, or one reported as a load, would show);
//  - rep string instructions are modelled one iteration per step (RepeatedStrings);
//  - for the instructions whose effect is a plain copy the observed value must match:
//    mov reg, [m] / pop reg / ret / leave load the slot's old bytes, mov [m], reg / push reg / call
//    store the expected bytes there.
#include "isa/InstructionInfo.h"

#include <gtest/gtest.h>

#if defined(__x86_64__) && defined(__linux__)

#include <capstone/capstone.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strobe {
namespace {

struct Node {
  Node *next;
  long value;
};

thread_local long tlsCounter;
long globalTable[32];

[[gnu::noinline]] long chase(const Node *node) {
  long sum = 0;
  for (; node; node = node->next)
    sum += node->value;
  return sum;
}

[[gnu::noinline]] long recurse(int depth) {
  if (depth == 0)
    return 1;
  volatile long keep = recurse(depth - 1); // not a tail call: keeps the frames
  return keep + depth;
}

[[gnu::noinline]] long workload() {
  Node nodes[12];
  for (int i = 0; i < 12; ++i)
    nodes[i] = {i + 1 < 12 ? &nodes[i + 1] : nullptr, i * 3};
  long sum = chase(nodes);
  for (int i = 0; i < 32; ++i) {
    globalTable[i] = i * sum;
    tlsCounter += globalTable[i];
  }
  char from[96], to[96];
  for (int i = 0; i < 96; ++i)
    from[i] = static_cast<char>(i);
  // One rep movsb of 40 bytes: 40 single steps, one iteration each.
  char copy[40];
  const char *source = from;
  char *destination = copy;
  size_t count = sizeof copy;
  asm volatile("rep movsb" : "+D"(destination), "+S"(source), "+c"(count) : : "memory");
  sum += copy[39];
  volatile size_t length = sizeof to; // not a constant: the call reaches libc's vector code
  std::memcpy(to, from, length);
  char big[300];
  std::memset(big, 'x', length * 3);
  big[length * 3 - 1] = 0;
  sum += static_cast<long>(std::strlen(big)) + (std::strchr(big, 'y') != nullptr);
  volatile char sink = to[50];
  // Into libc: lazy binding (xsave), vectorised string functions, qsort's callbacks.
  char text[64];
  std::snprintf(text, sizeof text, "%ld %s", sum, "strobe");
  long values[16];
  for (int i = 0; i < 16; ++i)
    values[i] = (i * 7919) % 23;
  std::qsort(values, 16, sizeof(long), [](const void *a, const void *b) {
    return static_cast<int>(*static_cast<const long *>(a) - *static_cast<const long *>(b));
  });
  return sum + recurse(12) + tlsCounter + sink + static_cast<long>(std::strlen(text)) + values[3];
}

// user_regs_struct in registerTable(X86_64) order.
std::vector<uint64_t> tableOrder(const user_regs_struct &r) {
  return {r.rax, r.rbx, r.rcx, r.rdx,    r.rsi,     r.rdi,     r.rbp,
          r.rsp, r.r8,  r.r9,  r.r10,    r.r11,     r.r12,     r.r13,
          r.r14, r.r15, r.rip, r.eflags, r.fs_base, r.gs_base, r.orig_rax};
}

std::optional<std::vector<uint8_t>> readMemory(pid_t pid, uint64_t address, size_t size) {
  std::vector<uint8_t> out(size);
  iovec local{out.data(), size};
  iovec remote{reinterpret_cast<void *>(address), size};
  if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(size))
    return std::nullopt;
  return out;
}

uint64_t little(std::span<const uint8_t> bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i)
    v |= uint64_t(bytes[i]) << (8 * i);
  return v;
}

unsigned tableIndex(std::string_view name) {
  const std::optional<unsigned> index = registerTable(Isa::X86_64).indexOf(name);
  EXPECT_TRUE(index) << name;
  return index.value_or(0);
}

// A 64- or 32-bit general-purpose register Capstone names, as (table index, bytes).
std::optional<std::pair<unsigned, unsigned>> gpr(csh handle, unsigned reg) {
  static const std::array<std::pair<std::string_view, std::string_view>, 16> kNames = {{
      {"rax", "eax"},
      {"rbx", "ebx"},
      {"rcx", "ecx"},
      {"rdx", "edx"},
      {"rsi", "esi"},
      {"rdi", "edi"},
      {"rbp", "ebp"},
      {"rsp", "esp"},
      {"r8", "r8d"},
      {"r9", "r9d"},
      {"r10", "r10d"},
      {"r11", "r11d"},
      {"r12", "r12d"},
      {"r13", "r13d"},
      {"r14", "r14d"},
      {"r15", "r15d"},
  }};
  const std::string_view name = cs_reg_name(handle, reg);
  for (const auto &[wide, narrow] : kNames) {
    if (name == wide)
      return std::pair{tableIndex(wide), 8u};
    if (name == narrow)
      return std::pair{tableIndex(wide), 4u};
  }
  return std::nullopt;
}

struct Tally {
  size_t steps = 0, undecodable = 0, unusual = 0, repeated = 0, slots = 0, fsSlots = 0;
  size_t loadsChecked = 0, storesChecked = 0, formulaSlots = 0;
  std::vector<std::string> failures;
};

class Verifier {
public:
  explicit Verifier(pid_t pid) : pid_(pid) {
    cs_open(CS_ARCH_X86, CS_MODE_64, &handle_);
    cs_option(handle_, CS_OPT_DETAIL, CS_OPT_ON);
    insn_ = cs_malloc(handle_);
  }
  ~Verifier() {
    cs_free(insn_, 1);
    cs_close(&handle_);
  }

  // Steps once; false when the child is gone.
  bool step(Tally &tally) {
    user_regs_struct before{};
    if (ptrace(PTRACE_GETREGS, pid_, nullptr, &before) != 0)
      return false;
    const std::vector<uint64_t> regs = tableOrder(before);
    std::vector<uint8_t> code = fetch(before.rip);
    std::optional<InstructionInfo> info = model_.decode(code, before.rip);
    std::optional<std::vector<MemorySlot>> slots = model_.slots(code, before.rip, regs);
    ++tally.steps;
    if (!info)
      ++tally.undecodable;
    else if (info->repeated)
      ++tally.repeated;
    else if (info->unusual)
      ++tally.unusual;
    struct Seen {
      MemorySlot slot;
      std::vector<uint8_t> before;
      std::optional<std::vector<uint8_t>> window; // the slot and 16 bytes either side
    };
    std::vector<Seen> seen;
    for (const MemorySlot &s : slots.value_or(std::vector<MemorySlot>{})) {
      ++tally.slots;
      std::optional<std::vector<uint8_t>> bytes = readMemory(pid_, s.address, s.size);
      if (!bytes) {
        fail(tally, before.rip, "predicted slot is not readable");
        continue;
      }
      seen.push_back({s, *bytes, readMemory(pid_, s.address - 16, s.size + 32)});
    }
    if (info)
      for (const MemoryOperand &op : info->memory)
        tally.fsSlots += op.segmentBase.has_value();
    // The codec evaluates the formulas instead of asking for the slots again: they must agree.
    AccessFormulas formulas;
    if (model_.formulas(code, before.rip, formulas)) {
      if (!slots || slots->size() != formulas.size())
        fail(tally, before.rip, "formulas for other slots than predicted");
      else
        for (size_t k = 0; k < formulas.size(); ++k) {
          const AccessFormula &f = formulas[k];
          const MemorySlot &s = (*slots)[k];
          ++tally.formulaSlots;
          if (f.address(regs) != s.address || f.size != s.size || f.read != s.read ||
              f.write != s.write)
            fail(tally, before.rip, "a formula gives another slot than predicted");
        }
    } else if (info && !info->unusual && info->memory.size() <= kMaxFormulas) {
      fail(tally, before.rip, "no formulas for a predictable instruction");
    }

    int status = 0;
    if (ptrace(PTRACE_SINGLESTEP, pid_, nullptr, nullptr) != 0 ||
        waitpid(pid_, &status, 0) != pid_ || !WIFSTOPPED(status))
      return false;
    user_regs_struct after{};
    ptrace(PTRACE_GETREGS, pid_, nullptr, &after);
    const std::vector<uint64_t> regsAfter = tableOrder(after);

    for (const Seen &s : seen) {
      if (!s.window)
        continue;
      std::optional<std::vector<uint8_t>> now =
          readMemory(pid_, s.slot.address - 16, s.slot.size + 32);
      if (!now)
        continue;
      for (size_t i = 0; i < now->size(); ++i) {
        uint64_t address = s.slot.address - 16 + i;
        bool covered = std::any_of(seen.begin(), seen.end(), [&](const Seen &o) {
          return o.slot.write && address >= o.slot.address &&
                 address < o.slot.address + o.slot.size;
        });
        if (!covered && (*now)[i] != (*s.window)[i]) {
          fail(tally, before.rip, "memory changed where no store was predicted");
          break;
        }
      }
    }
    if (info && !info->unusual && !seen.empty())
      checkValues(tally, *info, seen.front().slot, seen.front().before, seen.back().slot, regs,
                  regsAfter, code);
    return true;
  }

private:
  std::vector<uint8_t> fetch(uint64_t pc) {
    for (size_t size = 16; size > 0; --size)
      if (std::optional<std::vector<uint8_t>> bytes = readMemory(pid_, pc, size))
        return *bytes;
    return {};
  }

  void fail(Tally &tally, uint64_t pc, std::string_view what) {
    if (tally.failures.size() < 20) {
      std::vector<uint8_t> code = fetch(pc);
      const uint8_t *p = code.data();
      size_t n = code.size();
      uint64_t at = pc;
      std::string text = cs_disasm_iter(handle_, &p, &n, &at, insn_)
                             ? std::string(insn_->mnemonic) + " " + insn_->op_str
                             : "?";
      tally.failures.push_back(fmt::format("{} at {:#x}: {}", what, pc, text));
    }
  }

  // `first` is the first slot with its pre-step bytes; `last` the last (the implicit stack slot
  // of push/pop/call/ret/leave, which is their only slot for register operands).
  void checkValues(Tally &tally, const InstructionInfo &info, const MemorySlot &first,
                   const std::vector<uint8_t> &firstBefore, const MemorySlot &last,
                   const std::vector<uint64_t> &before, const std::vector<uint64_t> &after,
                   const std::vector<uint8_t> &code) {
    const uint8_t *p = code.data();
    size_t n = code.size();
    uint64_t at = info.address;
    if (!cs_disasm_iter(handle_, &p, &n, &at, insn_))
      return;
    const cs_x86 &x = insn_->detail->x86;
    const unsigned rip = tableIndex("rip"), rbp = tableIndex("rbp");
    auto stored = [&](const MemorySlot &slot) {
      std::optional<std::vector<uint8_t>> now = readMemory(pid_, slot.address, slot.size);
      return now ? little(*now) : ~uint64_t{0};
    };
    auto low = [](uint64_t v, unsigned bytes) { return bytes == 8 ? v : v & 0xffffffffu; };
    auto expect = [&](bool ok, size_t &counter) {
      ++counter;
      if (!ok)
        fail(tally, info.address, "observed value does not match the predicted address");
    };
    const uint64_t loaded = little(firstBefore);
    switch (insn_->id) {
    case X86_INS_MOV:
      if (x.op_count == 2 && x.operands[0].type == X86_OP_REG && x.operands[1].type == X86_OP_MEM) {
        if (auto dst = gpr(handle_, x.operands[0].reg))
          expect(after[dst->first] == low(loaded, dst->second), tally.loadsChecked);
      } else if (x.op_count == 2 && x.operands[0].type == X86_OP_MEM &&
                 x.operands[1].type == X86_OP_REG) {
        if (auto src = gpr(handle_, x.operands[1].reg))
          expect(stored(first) == low(before[src->first], src->second), tally.storesChecked);
      }
      break;
    case X86_INS_PUSH:
      if (x.operands[0].type == X86_OP_REG && x.operands[0].size == 8)
        if (auto src = gpr(handle_, x.operands[0].reg))
          expect(stored(last) == before[src->first], tally.storesChecked);
      break;
    case X86_INS_POP:
      if (x.operands[0].type == X86_OP_REG && x.operands[0].size == 8)
        if (auto dst = gpr(handle_, x.operands[0].reg))
          expect(after[dst->first] == loaded, tally.loadsChecked);
      break;
    case X86_INS_CALL:
      expect(stored(last) == info.address + info.length, tally.storesChecked);
      break;
    case X86_INS_RET:
      expect(after[rip] == loaded, tally.loadsChecked);
      break;
    case X86_INS_LEAVE:
      expect(after[rbp] == loaded, tally.loadsChecked);
      break;
    default:
      break;
    }
  }

  pid_t pid_;
  InstructionDecoder model_{Isa::X86_64, RepeatedStrings::OneIterationPerStep};
  csh handle_ = 0;
  cs_insn *insn_ = nullptr;
};

constexpr int kNoPtrace = 77;

TEST(MemoryModelStepTest, PredictedAddressesMatchARealProcess) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0)
      _exit(kNoPtrace);
    raise(SIGSTOP);
    _exit(static_cast<int>(workload() & 1));
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == kNoPtrace)
    GTEST_SKIP() << "ptrace is not permitted here";
  ASSERT_TRUE(WIFSTOPPED(status));
  ptrace(PTRACE_SETOPTIONS, pid, nullptr, PTRACE_O_EXITKILL);

  Tally tally;
  {
    Verifier verifier(pid);
    constexpr size_t kMaxSteps = 100000; // the whole run takes about 7,000 steps
    while (tally.steps < kMaxSteps && verifier.step(tally)) {
    }
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);

  for (const std::string &f : tally.failures)
    ADD_FAILURE() << f;
  std::printf("steps %zu, slots %zu (fs: %zu, as formulas: %zu), loads checked %zu, stores "
              "checked %zu, rep iterations %zu, other unusual %zu, undecodable %zu\n",
              tally.steps, tally.slots, tally.fsSlots, tally.formulaSlots, tally.loadsChecked,
              tally.storesChecked, tally.repeated, tally.unusual, tally.undecodable);
  EXPECT_GT(tally.steps, 1000u);
  EXPECT_GT(tally.loadsChecked, 100u);
  EXPECT_GT(tally.storesChecked, 100u);
  EXPECT_GT(tally.fsSlots, 0u);
  EXPECT_GT(tally.formulaSlots, tally.slots / 2);
  EXPECT_GE(tally.repeated, 40u); // the workload's own rep movsb
  EXPECT_EQ(tally.undecodable, 0u);
}

} // namespace
} // namespace strobe

#endif
