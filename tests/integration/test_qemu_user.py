"""strobe on an AArch64 program under qemu-user's gdbstub (qemu-aarch64 -g PORT), in both
debuggers: the host process is the emulator, the sample signal one qemu does not renumber but
reports in GDB's numbering (which LLDB keeps), the registers the debugger's AArch64 ones."""
import os
import shutil
import unittest

import harness

PROGRAM = harness.fixture("demo-aarch64")


def require_tools(*tools):
    harness.require_built()
    for tool in ("qemu-aarch64", *tools):
        if shutil.which(tool) is None:
            raise unittest.SkipTest(f"{tool} is not installed (scripts/setup.sh installs it)")
    if not os.path.exists(PROGRAM):
        raise unittest.SkipTest("demo-aarch64 not built: aarch64-linux-gnu-gcc was not found")


def assert_program_is_the_module(test, out):
    """The stub cannot list the memory map, yet every sample is placed in the program."""
    test.assertRegex(out, r"\n\s*\d+\s+100\.0%[^\n]*\sdemo-aarch64\n", out)
    test.assertNotIn("[unknown]", out)


def emulator(port, seconds):
    return harness.Background(["qemu-aarch64", "-g", str(port), PROGRAM, str(seconds)])


class GdbTest(unittest.TestCase):
    def setUp(self):
        require_tools("gdb-multiarch")
        harness.require_built(harness.GDB_SCRIPT)

    def test_samples_the_guest_and_the_program_runs_on_unharmed(self):
        port = harness.free_port()
        with emulator(port, 6):
            rc, out = harness.gdb([f"target remote 127.0.0.1:{port}", "break main", "continue",
                                   "delete",
                                   "strobe record --duration 2 --frequency 200 --overhead 100",
                                   "strobe profile --by function", "strobe profile --by module",
                                   "info breakpoints",
                                   "continue"], PROGRAM, binary="gdb-multiarch")
        self.assertEqual(rc, 0, out)
        self.assertIn("the duration was reached", out)
        self.assertGreaterEqual(harness.ended(out)[1], 50, out)
        harness.assert_demo_shares(self, out, 8)
        assert_program_is_the_module(self, out)
        self.assertIn("No breakpoints or watchpoints.", out)  # strobe's catchpoint is gone
        # A sample signal left to the program would kill it ("Power fail/restart").
        self.assertIn("exited normally", out)


class LldbTest(unittest.TestCase):
    def setUp(self):
        require_tools()
        harness.require_built(harness.LLDB_PLUGIN)

    def test_samples_the_guest_and_the_program_runs_on_unharmed(self):
        port = harness.free_port()
        with emulator(port, 6):
            _, out = harness.LldbSession.session(
                [f"target create {PROGRAM}", f"gdb-remote 127.0.0.1:{port}", "b main", "c",
                 "breakpoint delete -f",
                 "strobe record --duration 2 --frequency 200 --overhead 100",
                 "strobe profile --by function", "strobe profile --by module", "c"])
        self.assertIn("the duration was reached", out)
        self.assertGreaterEqual(harness.ended(out)[1], 20, out)
        harness.assert_demo_shares(self, out, 8)
        assert_program_is_the_module(self, out)
        # A sample signal left to the program would kill it ("Power fail/restart").
        self.assertIn("exited with status = 0", out)


if __name__ == "__main__":
    unittest.main()
