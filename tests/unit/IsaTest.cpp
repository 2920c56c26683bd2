// The inferior's architecture from what each debugger calls it.
#include "target/Isa.h"

#include <gtest/gtest.h>

using namespace strobe;

TEST(Isa, DebuggerSpellingsOfTheSupportedArchitectures) {
  EXPECT_EQ(requireIsa("i386:x86-64"), Isa::X86_64); // GDB
  EXPECT_EQ(requireIsa("x86_64"), Isa::X86_64);      // LLDB's triple, first word
  EXPECT_EQ(requireIsa("aarch64"), Isa::AArch64);    // both
  EXPECT_EQ(requireIsa("arm64"), Isa::AArch64);      // LLDB on some hosts
}

TEST(Isa, AnUnsupportedArchitectureIsRefusedWithWhatIsSupported) {
  for (const char *name : {"i386", "arm", "riscv:rv64", ""}) {
    try {
      requireIsa(name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const std::invalid_argument &e) {
      EXPECT_EQ(std::string(e.what()), "strobe does not support the architecture '" +
                                           std::string(name) +
                                           "'; it samples x86-64 and AArch64 programs");
    }
  }
}

TEST(Isa, TheTablesNamedIndicesAreTheRegistersOfThoseNames) {
  const RegisterTable &x86 = registerTable(Isa::X86_64);
  EXPECT_EQ(x86.indexOf("rip"), x86.pc);
  EXPECT_EQ(x86.indexOf("rsp"), x86.sp);
  EXPECT_EQ(x86.indexOf("rcx"), x86.repeatCount);
  EXPECT_EQ(x86.indexOf("orig_rax"), x86.syscallNr);
  EXPECT_EQ(x86.indexOf("x8"), std::nullopt);
  const RegisterTable &arm = registerTable(Isa::AArch64);
  EXPECT_EQ(arm.indexOf("pc"), arm.pc);
  EXPECT_EQ(arm.indexOf("x30"), arm.linkReg);
  EXPECT_EQ(arm.repeatCount, std::nullopt);
  EXPECT_EQ(arm.indexOf("rcx"), std::nullopt);
  EXPECT_EQ(arm.indexOf(""), std::nullopt);
}
