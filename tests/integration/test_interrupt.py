"""Ctrl-C typed at the terminal during a long `strobe` command, in both debuggers: the command
ends at once and keeps what it took, the process stays stopped for the user, and the next
`continue` runs it to its end (no breakpoint left behind, no interrupt left pending)."""
import os
import re
import tempfile
import unittest

import harness
from test_gdb_capture import require_gdb
from test_lldb_capture import require_lldb_plugin

# examples/demo runs for this many seconds of wall-clock time, stops included: long enough for
# the Ctrl-C and the kill below on any machine (a set amount of work ended in 0.65 s on a fast
# one, before them), short enough for the `continue` to its end.
DEMO_SECONDS = "8"


class InterruptScenarios:
    debugger = None
    ended_by_interrupt = None  # how the debugger's Ctrl-C reads in strobe's end line
    exited = None  # the debugger's line for the program's normal exit

    def terminal(self):
        terminal = harness.Terminal(self.debugger, harness.fixture("demo"), [DEMO_SECONDS])
        self.addCleanup(terminal.__exit__)
        terminal.command(self.break_main)
        terminal.command("run")
        terminal.expect(self.stopped_at_main)
        return terminal

    def test_ctrl_c_ends_a_record_and_keeps_its_samples(self):
        t = self.terminal()
        t.command("strobe record --duration 60s --frequency 500")
        t.pause(1.5)
        t.interrupt()
        end = t.expect(r"sampling ended: (.*); (\d+) samples? of 1 thread", timeout=20)
        self.assertRegex(end.group(1), self.ended_by_interrupt)
        self.assertGreater(int(end.group(2)), 20, t.output)
        t.command("strobe profile --by function")
        t.expect(r"compute_sixty")
        t.command("continue")
        t.expect(self.exited)

    def test_ctrl_c_ends_a_step_trace_and_keeps_its_steps(self):
        t = self.terminal()
        self.interrupt_a_trace(t, "interrupted")
        t.command("continue")
        t.expect(self.exited)

    def interrupt_a_trace(self, t, ended):
        """Ctrl-C two seconds into a long trace of the demo at `main` (Terminal `t`): asserts that
        it ended so (`ended`: a pattern of its end reason) and that `strobe dump` holds every step
        the end line counts. Returns the end line's match."""
        t.command("strobe step --count 50000000 --quiet")
        t.pause(2)
        t.interrupt()
        # The demo reads the clock: on a VM whose clock defeats single steps each read is run
        # out of the vDSO, a record of no instruction.
        end = t.expect(r"stepped (\d+) instructions of thread \d+ in [^;]*?(?:, ran (\d+) clock "
                       rf"reads? unstepped [^;]*)?; {ended};", timeout=20)
        steps = int(end.group(1))
        self.assertGreater(steps, 100, t.output)
        t.command("strobe dump")
        t.expect(rf"step trace of thread \d+: {steps + 1 + int(end.group(2) or 0)} records")
        return end

    def test_ctrl_c_ends_a_step_that_waits_for_a_stopped_thread(self):
        # `parked` reads a pipe that main writes to only after its loop: stepped alone, its
        # read never returns.
        t = harness.Terminal(self.debugger, harness.fixture("threads"), ["1", "2"])
        self.addCleanup(t.__exit__)
        t.command(self.break_parked)
        t.command("run")
        t.expect(self.stopped_at_parked)
        t.command("strobe step --count 3000 --quiet")
        t.pause(2)
        t.interrupt()
        end = t.expect(r"stepped (\d+) instructions of thread \d+ in [^;]*; ([^;]*);", timeout=20)
        self.assertRegex(end.group(2), self.step_ended_by_interrupt)
        t.command("continue")
        t.expect(self.exited)

    # A capture streamed to a file is checkpointed every second: killing the debugger loses at
    # most that second, and what is kept still names its functions offline.
    def test_a_streamed_capture_outlives_its_killed_debugger(self):
        t = self.terminal()
        with tempfile.TemporaryDirectory() as scratch:
            trace = os.path.join(scratch, "cut.strobe")
            t.command(f"strobe record --duration 60s --frequency 500 --output {trace}")
            t.pause(2.5)
            t.kill()
            rc, out = harness.run([harness.STROBE_REPORT, trace, "profile", "--by", "function"])
        self.assertEqual(rc, 0, out)
        self.assertIn("the capture did not finish", out)
        shares = harness.function_percentages(out)
        self.assertIn("compute_sixty", shares, out)
        self.assertGreater(shares["compute_sixty"], 40, out)


class GdbInterruptTest(InterruptScenarios, unittest.TestCase):
    debugger = harness.GdbSession
    break_main = "break main"
    stopped_at_main = r"Breakpoint 1, main \("
    # GDB's Ctrl-C reaches the running program as SIGINT.
    ended_by_interrupt = r"the process received signal SIGINT"
    exited = r"\[Inferior 1 \(process \d+\) exited normally\]"
    break_parked = "break parked"
    stopped_at_parked = r"Breakpoint 1, parked \("
    step_ended_by_interrupt = r"signal SIGINT"

    def setUp(self):
        require_gdb()

    def test_ctrl_c_ends_a_step_trace_through_gdbserver(self):
        # Through gdbserver strobe steps with gdbserver's packets, sent through GDB: Ctrl-C
        # between two of them ends the trace, and GDB knows where the thread is.
        port = harness.free_port()
        program = harness.fixture("demo")
        with harness.Background(["gdbserver", f"127.0.0.1:{port}", program, DEMO_SECONDS]):
            t = harness.Terminal(self.debugger, program)
            self.addCleanup(t.__exit__)
            t.command(f"target remote 127.0.0.1:{port}")
            t.command(self.break_main)
            t.command("continue")
            t.expect(self.stopped_at_main)
            end = self.interrupt_a_trace(t, "(?:interrupted|signal SIGINT)")
            t.command("p/x $pc")
            pc = t.expect(r"\$1 = (0x[0-9a-f]+)")
            dumped = re.findall(r" rip=(0x[0-9a-f]+)", t.output[end.end():pc.start()])
            self.assertEqual(dumped[-1], pc.group(1), "GDB reads the pc the trace ended at")
            t.command("continue")
            t.expect(self.exited)


class LldbInterruptTest(InterruptScenarios, unittest.TestCase):
    debugger = harness.LldbSession
    break_main = "breakpoint set -n main"
    stopped_at_main = r"stop reason = breakpoint 1\.1"
    ended_by_interrupt = r"interrupted"
    exited = r"Process \d+ exited with status = 0"
    break_parked = "breakpoint set -n parked"
    stopped_at_parked = r"stop reason = breakpoint 1\.1"
    step_ended_by_interrupt = r"interrupted"

    def setUp(self):
        require_lldb_plugin()

    # A program without a terminal of LLDB's leaves the prompt to the user while strobe samples
    # it in the background (the README's advice for interactive sessions).
    def test_strobe_start_keeps_the_prompt_for_a_program_without_a_terminal(self):
        t = harness.Terminal(self.debugger, harness.fixture("demo"), ["30"])
        self.addCleanup(t.__exit__)
        t.command(self.break_main)
        t.command("process launch --no-stdio")
        t.expect(self.stopped_at_main)
        t.pause(0.5)
        t.type("strobe start --frequency 500")  # LLDB printed its prompt before the stop
        t.expect(r"strobe: sampling pid \d+ at 500 Hz")
        t.pause(1)
        t.command("strobe status", timeout=10)
        running = t.expect(r"strobe: sampling pid \d+ at 500 Hz for [\d.]+ s: (\d+) samples")
        self.assertGreater(int(running.group(1)), 50, t.output)
        t.command("strobe stop", timeout=10)
        end = t.expect(r"sampling ended: 'strobe stop' was given; (\d+) samples")
        self.assertGreaterEqual(int(end.group(1)), int(running.group(1)), t.output)
        t.command("process status", timeout=10)
        t.expect(r"Process \d+ is running")


if __name__ == "__main__":
    unittest.main()
