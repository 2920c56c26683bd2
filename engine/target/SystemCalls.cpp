#include "target/SystemCalls.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace strobe {
namespace {

struct Numbers {
  std::array<uint64_t, 2> exec;
  std::array<uint64_t, 4> task; // AArch64 has no fork or vfork: clone stands for both
  std::array<uint64_t, 2> end;
  uint64_t clone;
  uint64_t clone3;
};

// From the kernel's syscall tables: arch/x86/entry/syscalls/syscall_64.tbl and the generic
// include/uapi/asm-generic/unistd.h that AArch64 uses.
constexpr Numbers kX86_64{{59, 322}, {56, 57, 58, 435}, {60, 231}, 56, 435};
constexpr Numbers kAArch64{{221, 281}, {220, 435, 220, 435}, {93, 94}, 220, 435};

const Numbers &numbersOf(Isa isa) { return isa == Isa::AArch64 ? kAArch64 : kX86_64; }

bool among(std::span<const uint64_t> numbers, uint64_t number) {
  return std::find(numbers.begin(), numbers.end(), number) != numbers.end();
}

} // namespace

unsigned systemCallNumberRegister(Isa isa) {
  const std::string_view name = isa == Isa::AArch64 ? "x8" : "rax";
  const RegisterTable &table = registerTable(isa);
  return static_cast<unsigned>(std::find(table.regs.begin(), table.regs.end(), name) -
                               table.regs.begin());
}

bool replacesProgram(Isa isa, uint64_t number) { return among(numbersOf(isa).exec, number); }
bool makesTask(Isa isa, uint64_t number) { return among(numbersOf(isa).task, number); }
bool endsTask(Isa isa, uint64_t number) { return among(numbersOf(isa).end, number); }
bool isClone(Isa isa, uint64_t number) { return number == numbersOf(isa).clone; }
bool isClone3(Isa isa, uint64_t number) { return number == numbersOf(isa).clone3; }

} // namespace strobe
