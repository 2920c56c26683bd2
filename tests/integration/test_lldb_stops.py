"""strobe in lldb-19: whatever strobe did not cause reaches the user as without strobe, sampling in
the background keeps the prompt, strobe leaves no setting behind, and bad input is one line."""
import os
import pty
import re
import select
import subprocess
import time
import unittest

import harness

SAMPLE_SIGNAL = "SIGRTMAX-1"
HANDLING = re.compile(rf"{re.escape(SAMPLE_SIGNAL)}\s+(true|false)\s+(true|false)\s+(true|false)")
# The line after each fixture's busy loop, reached after the seconds the fixture is given.
AFTER_SPIN = "crash.c:17"
DEMO_DONE = "demo.c:33"


def require_lldb_plugin():
    harness.require_built(harness.LLDB_PLUGIN)


# These tests are about who gets each stop, not throughput: an LLDB stop costs 0.6-5 ms
# depending on the machine's load, so they lift the slowdown budget (--overhead 100: at 5 ms a
# stop, a 0.5 s spin still gets ~60 samples) and only require that sampling clearly ran.
SAMPLING_RAN = 20


class LldbStops(unittest.TestCase):
    def setUp(self):
        require_lldb_plugin()

    def test_breakpoint_of_one_thread_while_every_thread_is_signalled(self):
        # A thread that starts every 20 ms hits the user's breakpoint while strobe signals the
        # busy threads one by one inside lldb-server: the stop is the user's, the signals still in
        # flight stay silent, and the program runs on to its end.
        rc, out = harness.lldb(
            ["b main", "run", "b short_lived", "breakpoint modify -i 10 2",
             "strobe record --frequency 1000 --overhead 100", "continue",
             "breakpoint delete 2", "continue"],
            harness.fixture("threads"), ["2", "4"])
        self.assertEqual(rc, 0, out)
        reason, samples = harness.ended(out)
        self.assertEqual(reason, "the process stopped at a breakpoint", out)
        self.assertGreater(samples, SAMPLING_RAN, out)
        self.assertEqual(len(re.findall(r"stop reason = breakpoint 2\.1", out)), 2, out)
        self.assertNotIn(f"signal {SAMPLE_SIGNAL}", out)
        self.assertRegex(out, r"exited with status = 0")

    def test_user_breakpoint_ends_record_and_reaches_the_user(self):
        rc, out = harness.lldb(
            ["b main", "run", "process handle SIGRTMAX-1", f"b {DEMO_DONE}",
             "strobe record --frequency 500 --overhead 100", "process handle SIGRTMAX-1",
             "continue",
             "strobe status", "process handle SIGRTMAX-1"],
            harness.fixture("demo"), ["1"])
        self.assertEqual(rc, 0, out)
        reason, samples = harness.ended(out)
        self.assertEqual(reason, "the process stopped at a breakpoint", out)
        self.assertGreater(samples, SAMPLING_RAN, out)
        self.assertRegex(out, r"stop reason = breakpoint 2\.1", out)
        original, at_breakpoint, later = HANDLING.findall(out)
        # Strobe's own handling (stop, no pass) is gone at once; a sample signal still queued
        # at the breakpoint may keep it discarded until the user's next `continue` drops it.
        self.assertEqual(at_breakpoint[1], "false", out)
        self.assertIn(at_breakpoint, (original, ("false", "false", "false")), out)
        self.assertEqual(later, original, out)

    def test_exit_during_record_keeps_the_samples(self):
        rc, out = harness.lldb(["b main", "run", "strobe record --frequency 1000 --overhead 100",
                                "strobe profile", "process handle SIGRTMAX-1"],
                               harness.fixture("demo"), ["1"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"Process \d+ exited with status = 0 \(0x00000000\)", out)
        reason, samples = harness.ended(out)
        self.assertEqual(reason, "the process exited with status 0", out)
        self.assertGreater(samples, SAMPLING_RAN, out)
        self.assertIn("compute_sixty", harness.function_percentages(out), out)

    def test_annotate_after_an_exit_before_symbolizing(self):
        harness.check_annotate_after_an_early_exit(self, harness.lldb)

    def test_crash_reaches_the_user_as_sigsegv(self):
        rc, out = harness.lldb(["b main", "run", "strobe record --frequency 1000 --overhead 100",
                                "strobe profile"],
                               harness.fixture("crash"), ["0.5"])
        self.assertIn("stop reason = signal SIGSEGV", out)
        self.assertRegex(out, r"-> 18\s+return \*null_pointer;", out)
        reason, samples = harness.ended(out)
        self.assertEqual(reason, "the process received signal SIGSEGV (11)", out)
        self.assertGreater(samples, SAMPLING_RAN, out)
        self.assertIn("spin_for", harness.function_percentages(out), out)

    def test_background_sampling_then_stop_leaves_the_process_running(self):
        rc, out = harness.lldb(
            ["b main", "run", "process handle SIGRTMAX-1",
             "strobe start --frequency 1000 --overhead 100",
             "script import time; time.sleep(2)", "strobe status", "strobe stop",
             "script time.sleep(0.3)", "process status", "process handle SIGRTMAX-1",
             "target stop-hook list", "strobe profile"],
            harness.fixture("demo"), ["30"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"strobe: sampling pid \d+ at 1000 Hz for 2\.\d+ s: \d+ samples", out)
        reason, samples = harness.ended(out)
        self.assertEqual(reason, "'strobe stop' was given", out)
        self.assertGreater(samples, SAMPLING_RAN, out)
        self.assertRegex(out, r"Process \d+ is running", out)
        original, after = HANDLING.findall(out)
        self.assertEqual(after, original, out)
        self.assertIn("No stop hooks", out)
        self.assertNotIn(f"signal {SAMPLE_SIGNAL}", out)
        self.assertIn("compute_sixty", harness.function_percentages(out), out)

    def test_background_sampling_hands_a_breakpoint_to_the_user(self):
        rc, out = harness.lldb(
            ["b main", "run", f"b {AFTER_SPIN}", "strobe start --frequency 1000 --overhead 100",
             "script import time; time.sleep(2.5)", "process status", "strobe status",
             "continue"],
            harness.fixture("crash"), ["1"])
        reason, samples = harness.ended(out)
        self.assertEqual(reason, "the process stopped at a breakpoint", out)
        self.assertGreater(samples, SAMPLING_RAN, out)
        self.assertGreaterEqual(out.count("stop reason = breakpoint 2.1"), 2, out)
        self.assertIn("stop reason = signal SIGSEGV", out, "the user's continue goes on as usual")
        self.assertNotIn(f"signal {SAMPLE_SIGNAL}", out)

    def test_detach_or_kill_during_background_sampling_ends_it_first(self):
        # Both had hung: LLDB's command waited for the process's run lock, held by strobe's
        # thread in an SB call that waited for the command's API lock.
        for command, after in (("process detach", r"Process \d+ detached"),
                               ("process kill", r"Process \d+ exited with status = 9")):
            with self.subTest(command=command):
                rc, out = harness.lldb(
                    ["b main", "run", "strobe start --frequency 1000 --overhead 100",
                     "script import time; time.sleep(1)", command, "strobe profile"],
                    harness.fixture("demo"), ["3"], timeout=60)
                self.assertEqual(rc, 0, out)
                reason, samples = harness.ended(out)
                self.assertEqual(reason, f"'{command}' was given", out)
                self.assertGreater(samples, SAMPLING_RAN, out)
                self.assertRegex(out, after, out)
                self.assertIn("compute_sixty", harness.function_percentages(out), out)

    def test_the_process_runs_on_as_strobe_stop_returns(self):
        # The process ran on but read as stopped for a moment after `strobe stop`: a
        # `start --no-resume` typed then armed and never sampled (4 times in 10); six
        # cycles make a miss unlikely.
        cycle = ["strobe start", "script import time; time.sleep(0.3)", "strobe stop",
                 "strobe start --no-resume", "process status", "process interrupt",
                 "script time.sleep(0.2)"]
        _, out = harness.LldbSession.session(["b main", "run"] + cycle * 6 + ["process kill"],
                                             harness.fixture("demo"), ["0"])
        self.assertEqual(out.count("error: the process is running; interrupt it first"), 6, out)
        self.assertEqual(len(re.findall(r"Process \d+ is running", out)), 6, out)

    def test_the_users_continue_samples_after_start_no_resume(self):
        rc, out = harness.lldb(
            ["b main", "run", "process handle SIGRTMAX-1",
             "strobe start --no-resume --frequency 1000 --overhead 100", "continue",
             "process handle SIGRTMAX-1",
             "strobe profile"],
            harness.fixture("demo"), ["1"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"Process \d+ resuming", out)
        self.assertRegex(out, r"Process \d+ exited with status = 0", out)
        reason, samples = harness.ended(out)
        self.assertEqual(reason, "the process exited with status 0", out)
        self.assertGreater(samples, SAMPLING_RAN, out)
        self.assertNotIn(f"signal {SAMPLE_SIGNAL}", out)
        original, after = HANDLING.findall(out)
        self.assertEqual(after, original, out)

    def test_dash_dash_help_prints_the_subcommands_help(self):
        rc, out = harness.lldb(["strobe dump trace.strobe --tenet --help", "strobe mem -h"])
        self.assertEqual(rc, 0, out)
        self.assertIn("Usage: strobe dump [OPTIONS] [FILE]", out)
        self.assertIn("--tenet", out)
        self.assertIn("  mem table    heap usage", out)
        self.assertNotIn("error:", out)

    def test_bad_input_is_one_line_errors(self):
        cases = [
            (["strobe frobnicate"], "unknown subcommand 'frobnicate'; try 'strobe help'"),
            (["strobe record"], "no process; launch or attach to one first"),
            (["strobe profile"], "nothing captured yet"),
            (["strobe record --bogus"], "'strobe record' has no option --bogus"),
            (['strobe load "/nonexistent dir/x.strobe"'], "/nonexistent dir/x.strobe"),
            (["b main", "run", "strobe record --frequency abc"],
             "--frequency expects a number, not 'abc'"),
            (["b main", "run", "strobe start --no-resume", "strobe record"],
             "sampling is already running"),
            (["b main", "run", "strobe step --count 3 --quiet", "strobe dump --thread 1"],
             "no records of thread 1; threads: "),
        ]
        for commands, message in cases:
            with self.subTest(command=commands[-1]):
                rc, out = harness.lldb(commands, harness.fixture("demo"), ["1"])
                errors = [line for line in out.splitlines() if line.startswith("error:")]
                self.assertEqual(len(errors), 1, out)
                self.assertIn(message, errors[0])
                after = out.split(commands[-1], 1)[-1].strip().splitlines()
                self.assertEqual(len(after), 1, f"one line for {commands[-1]!r}:\n{out}")


    def test_an_unsupported_architecture_is_refused(self):
        harness.require_i386_programs()
        for command in ("strobe record --duration 0.2", "strobe step --count 2",
                        "strobe mem start"):
            with self.subTest(command=command):
                rc, out = harness.lldb(["process launch -s", command],
                                       harness.fixture("spin-i386"))
                errors = [line for line in out.splitlines() if line.startswith("error:")]
                self.assertEqual(errors, [harness.UNSUPPORTED_I386], out)


class InteractiveLldb:
    """lldb-19 on a terminal of its own, as a user runs it."""

    def __init__(self, argv):
        self.primary, secondary = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=secondary, stdout=secondary, stderr=secondary,
                                     start_new_session=True)
        os.close(secondary)
        self.output = ""

    def read(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            ready, _, _ = select.select([self.primary], [], [], 0.05)
            if ready:
                try:
                    self.output += os.read(self.primary, 65536).decode(errors="replace")
                except OSError:
                    return

    def command(self, line, seconds=0.5):
        os.write(self.primary, (line + "\n").encode())
        self.read(seconds)

    def close(self):
        self.proc.kill()
        self.proc.wait()
        os.close(self.primary)


class InteractiveBackground(unittest.TestCase):
    def setUp(self):
        require_lldb_plugin()

    def test_the_prompt_stays_the_users_while_sampling(self):
        with harness.Background([harness.fixture("demo"), "0"]) as demo:
            lldb = InteractiveLldb(["lldb-19", "--no-lldbinit", "--no-use-colors",
                                    "-p", str(demo.pid)])
            try:
                lldb.read(3)
                lldb.command(f"plugin load {harness.LLDB_PLUGIN}")
                lldb.command("strobe start --frequency 500 --overhead 100", 1.5)
                lldb.command("strobe status")
                lldb.command("strobe stop")
                lldb.command("process handle SIGRTMAX-1")
                lldb.command("detach")
            finally:
                lldb.close()
        out = lldb.output.replace("\r", "")
        self.assertRegex(out, r"strobe: sampling pid \d+ at 500 Hz for 1\.\d+ s: \d+ samples", out)
        self.assertIn("sampling ended: 'strobe stop' was given", out)
        self.assertRegex(out, rf"{SAMPLE_SIGNAL}\s+true\s+false\s+false", out)
        self.assertNotIn(f"signal {SAMPLE_SIGNAL}", out)
        self.assertLess(out.count("(lldb)"), 40, "strobe's stops must not redraw the prompt")


if __name__ == "__main__":
    unittest.main()
