#include "target/GdbSignals.h"

#include <gtest/gtest.h>

#include <csignal>

using namespace strobe;

// Numbers from GDB's documentation of the remote protocol's signals (signals.def), not from the
// table under test; the Linux numbers are the x86-64 / AArch64 kernel's.
TEST(GdbSignals, StandardSignalsKeepOrMoveAsGdbNumbersThem) {
  EXPECT_EQ(gdbSignalFromHost(SIGSEGV), 11);
  EXPECT_EQ(gdbSignalFromHost(SIGTRAP), 5);
  EXPECT_EQ(gdbSignalFromHost(10 /* SIGUSR1 */), 30);
  EXPECT_EQ(gdbSignalFromHost(17 /* SIGCHLD */), 20);
  EXPECT_EQ(gdbSignalFromHost(30 /* SIGPWR */), 32);
  EXPECT_EQ(gdbSignalFromHost(31 /* SIGSYS */), 12);
  EXPECT_EQ(gdbSignalFromHost(19 /* SIGSTOP */), 17);
}

TEST(GdbSignals, TranslatesBack) {
  EXPECT_EQ(hostSignalFromGdb(32), 30);
  EXPECT_EQ(hostSignalFromGdb(30), 10);
  EXPECT_EQ(hostSignalFromGdb(7 /* EMT: no such signal on Linux */), std::nullopt);
  for (int signo = 1; signo < 32; ++signo) {
    if (signo == 16 /* SIGSTKFLT: no remote number */)
      continue;
    std::optional<int> remote = gdbSignalFromHost(signo);
    ASSERT_TRUE(remote) << signo;
    EXPECT_EQ(hostSignalFromGdb(*remote), signo);
  }
}

TEST(GdbSignals, RealTimeSignalsHaveNoFixedNumber) {
  EXPECT_EQ(gdbSignalFromHost(SIGRTMAX - 1), std::nullopt);
}
