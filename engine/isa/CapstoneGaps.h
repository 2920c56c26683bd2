// Instructions that Capstone 4.0.2 cannot decode but ordinary programs execute, described from
// their encodings directly:
//  - x86-64 VEX and EVEX instructions it lacks (AVX-512 kmov*, vpcmp* into mask registers, ...),
//    which glibc's string functions use on CPUs that have AVX-512. These never branch; the length
//    is exact, but an EVEX memory operand's compressed displacement depends on tables we do not
//    carry, so any memory operand makes the instruction `unusual`.
//  - AArch64 LSE atomics (ARMv8.1: ldadd, swp, cas, casp and their aliases) and ldapr (ARMv8.3),
//    which compilers emit for atomics: a single base register, no offset, fully described; the
//    pointer-authenticating branches (retaa, braa, blraa, ...: ARMv8.3 return-address signing);
//    ldraa/ldrab, unusual (the address is a signed pointer).
#pragma once

#include "isa/InstructionInfo.h"

#include <cstdint>
#include <optional>
#include <span>

namespace strobe {

std::optional<InstructionInfo> describeX86VexGap(std::span<const uint8_t> bytes, uint64_t pc);
std::optional<InstructionInfo> describeAArch64Gap(std::span<const uint8_t> bytes, uint64_t pc);

} // namespace strobe
