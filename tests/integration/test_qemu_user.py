"""strobe on an AArch64 program under qemu-user's gdbstub (qemu-aarch64 -g PORT), in both
debuggers: the host process is the emulator, the sample signal one qemu does not renumber but
reports in GDB's numbering (which LLDB keeps), the registers the debugger's AArch64 ones. And
`strobe step --memory` there, and the vector registers of a trace, checked against the debugger's
own stepping."""
import os
import shutil
import unittest

import harness
from test_step import HERE, check_extended_trace, check_tenet_trace

PROGRAM = harness.fixture("demo-aarch64")
STEPPED = harness.fixture("steps-aarch64")
# The stub takes 3-6 ms a step: a few turns of walk's loop, with loads, stores and FP arithmetic.
STEPS = 300
TENET_REGISTERS = ("x0", "x30", "sp", "pc")
# walk's floating-point arithmetic: the registers it leaves its values in.
VECTOR_CHANGES = ("v0", "v1")


def require_tools(*tools):
    harness.require_built()
    for tool in ("qemu-aarch64", *tools):
        if shutil.which(tool) is None:
            raise unittest.SkipTest(f"{tool} is not installed (scripts/setup.sh installs it)")
    for program in (PROGRAM, STEPPED):
        if not os.path.exists(program):
            raise unittest.SkipTest(f"{os.path.basename(program)} not built: "
                                    "aarch64-linux-gnu-gcc was not found")


def assert_program_is_the_module(test, out):
    """The stub cannot list the memory map, yet every sample is placed in the program."""
    test.assertRegex(out, r"\n\s*\d+\s+100\.0%[^\n]*\sdemo-aarch64\n", out)
    test.assertNotIn("[unknown]", out)


def emulator(port, seconds=None, program=PROGRAM, cpu=None):
    """qemu-aarch64's stub on `port`; `cpu`: a CPU model instead of qemu's default, which has
    SVE (the stub then describes z0-z31, and LLDB 19 reads no vector register)."""
    return harness.Background(["qemu-aarch64", *(["-cpu", cpu] if cpu else []), "-g", str(port),
                               program, *([str(seconds)] if seconds else [])])


# How each debugger reaches walk in the stepped program under the stub on a port.
REACH_WALK = {
    "gdb": lambda port: [f"target remote 127.0.0.1:{port}", "break walk", "continue"],
    "lldb": lambda port: [f"target create {STEPPED}", f"gdb-remote 127.0.0.1:{port}", "b walk",
                          "continue"],
}


def strobe_run(debugger, step_options, dump_options, cpu=None):
    """A strobe_run for test_step's checks: in `debugger` ("gdb", "lldb"), from walk, `strobe
    step` of STEPS instructions, then `strobe dump` into the file it is given."""
    def run(path):
        port = harness.free_port()
        with emulator(port, program=STEPPED, cpu=cpu):
            commands = [*REACH_WALK[debugger](port),
                        f"strobe step --count {STEPS} {step_options} --quiet",
                        f"strobe dump {dump_options} --output {path}", "continue"]
            if debugger == "gdb":
                return harness.gdb(commands, STEPPED, binary="gdb-multiarch")
            return harness.lldb(commands)
    return run


def reference_run(debugger, extended=False, cpu=None):
    """A reference_run for test_step's checks: the debugger's own stepping from walk."""
    def run(accesses, states):
        arguments = f"'{accesses}', '{states}', 'aarch64', extended={extended}"
        if debugger == "gdb":
            argv, flag, script = ["gdb-multiarch", "-nx", "-batch"], "-ex", "python"
            call, program = f"step_reference.run_gdb({arguments})", [STEPPED]
        else:
            argv, flag, script = ["lldb-19", "-b", "--no-lldbinit"], "-o", "script"
            call, program = f"step_reference.run_lldb(lldb.debugger, {arguments})", []
        port = harness.free_port()
        with emulator(port, program=STEPPED, cpu=cpu):
            for command in [*REACH_WALK[debugger](port),
                            f"{script} import sys; sys.path.insert(0, '{HERE}')",
                            f"{script} import step_reference", f"{script} {call}", "kill"]:
                argv += [flag, command]
            return harness.run(argv + program)
    return run


class GdbTest(unittest.TestCase):
    def setUp(self):
        require_tools("gdb-multiarch")
        harness.require_built(harness.GDB_SCRIPT)

    def test_samples_the_guest_and_the_program_runs_on_unharmed(self):
        port = harness.free_port()
        with emulator(port, 6):
            rc, out = harness.gdb([f"target remote 127.0.0.1:{port}", "break main", "continue",
                                   "delete",
                                   "strobe record --duration 4 --frequency 200 --overhead 100",
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

    def test_step_trace_equals_gdbs_own_stepping(self):
        check_tenet_trace(self, strobe_run("gdb", "--memory", "--tenet"), reference_run("gdb"),
                          STEPS, TENET_REGISTERS)

    def test_vector_registers_equal_gdbs_own_stepping(self):
        # Read through GDB's own registers (the stub is remote), by strobe's GDB port.
        check_extended_trace(self, strobe_run("gdb", "", ""), reference_run("gdb", extended=True),
                             STEPS, "aarch64", VECTOR_CHANGES)

    def test_registers_gdb_cannot_read_are_named(self):
        # GDB reads v0-v31 from the stub's SVE registers; only tpidr is missing.
        port = harness.free_port()
        with emulator(port, program=STEPPED):
            rc, out = harness.gdb([f"target remote 127.0.0.1:{port}", "break walk", "continue",
                                   "strobe step --count 3 --quiet", "continue"],
                                  STEPPED, binary="gdb-multiarch")
        self.assertEqual(rc, 0, out)
        self.assertIn("strobe: this target has no tpidr: the trace holds 0 for it\n", out)


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
                 "strobe record --duration 4 --frequency 200 --overhead 100",
                 "strobe profile --by function", "strobe profile --by module", "c"])
        self.assertIn("the duration was reached", out)
        self.assertGreaterEqual(harness.ended(out)[1], 20, out)
        harness.assert_demo_shares(self, out, 8)
        assert_program_is_the_module(self, out)
        # A sample signal left to the program would kill it ("Power fail/restart").
        self.assertIn("exited with status = 0", out)

    def test_step_trace_equals_lldbs_own_stepping(self):
        check_tenet_trace(self, strobe_run("lldb", "--memory", "--tenet"), reference_run("lldb"),
                          STEPS, TENET_REGISTERS)

    def test_vector_registers_equal_lldbs_own_stepping(self):
        # qemu's stub answers no qRegisterInfo: strobe reads them through SBValues. A CPU without
        # SVE, so that LLDB has v0-v31.
        check_extended_trace(self, strobe_run("lldb", "", "", cpu="cortex-a57"),
                             reference_run("lldb", extended=True, cpu="cortex-a57"), STEPS,
                             "aarch64", VECTOR_CHANGES)

    def test_registers_lldb_cannot_read_are_named(self):
        # On qemu's default CPU (SVE) LLDB reads no v register, and the stub has no tpidr.
        port = harness.free_port()
        with emulator(port, program=STEPPED):
            rc, out = harness.lldb([f"target create {STEPPED}", f"gdb-remote 127.0.0.1:{port}",
                                    "b walk", "c", "strobe step --count 3 --quiet", "c"])
        self.assertEqual(rc, 0, out)
        self.assertIn("strobe: this target has no v0-v31, tpidr: the trace holds 0 for them\n",
                      out)


if __name__ == "__main__":
    unittest.main()
