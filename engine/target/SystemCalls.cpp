#include "target/SystemCalls.h"

#include <algorithm>
#include <span>

namespace strobe {
namespace {

struct Numbers {
  std::span<const uint64_t> exec, task, end;
  uint64_t munmap, clone, clone3;
};

// From the kernel's syscall tables: arch/x86/entry/syscalls/syscall_64.tbl and the generic
// include/uapi/asm-generic/unistd.h that AArch64 uses (no fork or vfork: clone does both).
constexpr uint64_t kX86_64Exec[] = {59, 322}, kX86_64Task[] = {56, 57, 58, 435},
                   kX86_64End[] = {60, 231};
constexpr uint64_t kAArch64Exec[] = {221, 281}, kAArch64Task[] = {220, 435},
                   kAArch64End[] = {93, 94};
constexpr Numbers kX86_64{kX86_64Exec, kX86_64Task, kX86_64End, 11, 56, 435};
constexpr Numbers kAArch64{kAArch64Exec, kAArch64Task, kAArch64End, 215, 220, 435};

const Numbers &numbersOf(Isa isa) { return isa == Isa::AArch64 ? kAArch64 : kX86_64; }

bool among(std::span<const uint64_t> numbers, uint64_t number) {
  return std::find(numbers.begin(), numbers.end(), number) != numbers.end();
}

} // namespace

bool replacesProgram(Isa isa, uint64_t number) { return among(numbersOf(isa).exec, number); }
bool unmapsMemory(Isa isa, uint64_t number) { return number == numbersOf(isa).munmap; }
bool makesTask(Isa isa, uint64_t number) { return among(numbersOf(isa).task, number); }
bool endsTask(Isa isa, uint64_t number) { return among(numbersOf(isa).end, number); }
bool isClone(Isa isa, uint64_t number) { return number == numbersOf(isa).clone; }
bool isClone3(Isa isa, uint64_t number) { return number == numbersOf(isa).clone3; }

} // namespace strobe
