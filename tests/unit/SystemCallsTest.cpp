// The system call numbers step traces treat apart, against the host's own headers where the host
// is the ISA, and the kernel's generic table (AArch64) otherwise.
#include "target/SystemCalls.h"

#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <sys/syscall.h>
#endif

using namespace strobe;

#if defined(__x86_64__)
TEST(SystemCalls, X86_64NumbersAreTheHostKernels) {
  for (long number : {SYS_execve, SYS_execveat})
    EXPECT_TRUE(replacesProgram(Isa::X86_64, number)) << number;
  for (long number : {SYS_fork, SYS_vfork, SYS_clone, SYS_clone3})
    EXPECT_TRUE(makesTask(Isa::X86_64, number)) << number;
  for (long number : {SYS_exit, SYS_exit_group})
    EXPECT_TRUE(endsTask(Isa::X86_64, number)) << number;
  EXPECT_TRUE(unmapsMemory(Isa::X86_64, SYS_munmap));
  for (long number : {SYS_read, SYS_write, SYS_rt_sigreturn, SYS_getpid, SYS_futex, SYS_mmap}) {
    EXPECT_FALSE(replacesProgram(Isa::X86_64, number) || makesTask(Isa::X86_64, number) ||
                 endsTask(Isa::X86_64, number) || unmapsMemory(Isa::X86_64, number))
        << number;
  }
  EXPECT_TRUE(isClone(Isa::X86_64, SYS_clone));
  EXPECT_TRUE(isClone3(Isa::X86_64, SYS_clone3));
  EXPECT_FALSE(isClone(Isa::X86_64, SYS_fork));
}
#endif

TEST(SystemCalls, AArch64NumbersAreTheGenericTables) {
  EXPECT_TRUE(replacesProgram(Isa::AArch64, 221)); // execve
  EXPECT_TRUE(replacesProgram(Isa::AArch64, 281)); // execveat
  EXPECT_TRUE(makesTask(Isa::AArch64, 220));       // clone
  EXPECT_TRUE(makesTask(Isa::AArch64, 435));       // clone3
  EXPECT_TRUE(endsTask(Isa::AArch64, 93));         // exit
  EXPECT_TRUE(endsTask(Isa::AArch64, 94));         // exit_group
  EXPECT_TRUE(unmapsMemory(Isa::AArch64, 215));    // munmap
  EXPECT_FALSE(unmapsMemory(Isa::AArch64, 11));    // x86-64's munmap is AArch64's setxattr
  EXPECT_FALSE(replacesProgram(Isa::AArch64, 59)); // x86-64's execve is AArch64's pipe2
  EXPECT_FALSE(makesTask(Isa::AArch64, 139));      // rt_sigreturn
}

TEST(SystemCalls, TheNumberIsInRaxOrX8) {
  EXPECT_EQ(registerTable(Isa::X86_64).regs[registerTable(Isa::X86_64).systemCallNumber], "rax");
  EXPECT_EQ(registerTable(Isa::AArch64).regs[registerTable(Isa::AArch64).systemCallNumber], "x8");
}
