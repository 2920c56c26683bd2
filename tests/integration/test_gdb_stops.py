"""strobe in GDB: a stop strobe did not cause (a breakpoint, an exit, a crash) ends the capture,
keeps its samples and reaches the user as it would without strobe; bad input fails in one line."""
import os
import re
import tempfile
import unittest

import harness
from test_gdb_capture import require_gdb


class StopsReachTheUserTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def assert_no_leftovers(self, out):
        self.assertNotIn("catchpoint", out)
        self.assertNotIn("_strobe_stop", out)

    def test_the_process_exiting_ends_a_step_trace_and_keeps_it(self):
        rc, out = harness.gdb(["break main", "run", "break exit", "continue", "delete",
                               "strobe step --count 50000 --quiet", "strobe status"],
                              harness.fixture("steps"))
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"\[Inferior 1 \(process \d+\) exited normally\]")
        stepped = re.search(r"strobe: stepped (\d+) instructions of thread \d+ in .*; "
                            r"the process exited with status 0;", out)
        self.assertIsNotNone(stepped, out)
        self.assertLess(int(stepped.group(1)), 50000)
        self.assertIn("holding a capture (live): 1 step trace\n", out)
        self.assertNotIn("error", out)

    def test_a_step_into_the_exit_leaves_the_users_scheduler_locking(self):
        # strobe steps with scheduler-locking "step"; once the process is gone GDB refuses the
        # default "replay" back and sets "off", so strobe restores it at the next process's stop.
        rc, out = harness.gdb(["break main", "run", "break _exit", "continue",
                               "strobe step --count 50 --quiet", "run", "show scheduler-locking"],
                              harness.fixture("steploop_int"), ["10"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ "
                              r".*; the process exited with status 0;")
        self.assertIn('Mode for locking scheduler during execution is "replay".', out)

    def test_breakpoint_during_a_background_capture(self):
        rc, out = harness.gdb(["break main", "run", "strobe start --no-resume --frequency 1000",
                               "break compute_ten", "ignore $bpnum 5000", "continue",
                               "info breakpoints", "strobe status"],
                              harness.fixture("demo"), ["8"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"\nBreakpoint \d+, compute_ten \(\)")
        self.assertIn("strobe: sampling ended: the process stopped at a breakpoint", out)
        self.assertIn("strobe: idle; holding a capture (live)", out)
        self.assert_no_leftovers(out)

    def test_breakpoint_ends_a_record(self):
        rc, out = harness.gdb(["break main", "run", "break compute_ten", "ignore $bpnum 5000",
                               "strobe record --frequency 1000", "bt 1", "info breakpoints"],
                              harness.fixture("demo"), ["8"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"\nBreakpoint 2, compute_ten \(\)")
        self.assertRegex(out, r"the process stopped at a breakpoint; [1-9]\d* samples")
        self.assertRegex(out, r"#0 +compute_ten \(\)")
        self.assert_no_leftovers(out)

    def test_breakpoint_of_one_thread_while_every_thread_is_signalled(self):
        # A thread that starts every 20 ms hits the user's breakpoint while strobe signals the
        # busy threads one by one: the stop is the user's, the signals still in flight stay silent,
        # and the program runs on to its end.
        rc, out = harness.gdb(["break main", "run", "break short_lived", "ignore $bpnum 10",
                               "strobe record --frequency 1000 --overhead 100", "continue",
                               "delete", "continue"],
                              harness.fixture("threads"), ["2", "4"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"hit Breakpoint 2, short_lived \(")
        threads = re.search(r"the process stopped at a breakpoint; [1-9]\d* samples of (\d+) "
                            r"threads", out)
        self.assertIsNotNone(threads, out)
        self.assertGreaterEqual(int(threads.group(1)), 6, out)  # main, parked, 4 workers
        self.assertEqual(len(re.findall(r"hit Breakpoint 2, short_lived", out)), 2, out)
        self.assertNotIn("SIG63", out)
        self.assertRegex(out, r"\[Inferior 1 \(process \d+\) exited normally\]")
        self.assert_no_leftovers(out)

    def test_signals_of_the_last_round_stay_silent_after_the_duration(self):
        # The duration ends a capture at one thread's stop of the last round, while GDB, which
        # stopped every thread there, may hold other threads' sample signals and report them
        # after the next resume: they must not reach the user, nor the program, which they would
        # kill. GDB holds those that stopped their threads while it was stopping every thread at
        # the last stop, which the capture's end hands to it: a race, so several runs. Without
        # the fix, 3 runs in 6 printed "received signal SIG63", and this test failed 1 time in 2.
        for _ in range(6):
            rc, out = harness.gdb(["break main", "run", "delete",
                                   "strobe record --duration 1 --frequency 1000 --overhead 100",
                                   "continue"],
                                  harness.fixture("threads"), ["2", "8"])
            self.assertEqual(rc, 0, out)
            self.assertIn("the duration was reached", out)
            self.assertNotIn("SIG63", out)
            self.assertRegex(out, r"\[Inferior 1 \(process \d+\) exited normally\]")

    def test_exit_keeps_the_samples(self):
        rc, out = harness.gdb(["break main", "run", "strobe record --frequency 500",
                               "strobe profile"], harness.fixture("demo"), ["1"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"\[Inferior 1 \(process \d+\) exited normally\]")
        self.assertRegex(out, r"the process exited with status 0; [1-9]\d* samples")
        self.assertIn("compute_sixty", harness.function_percentages(out))

    def test_annotate_after_an_exit_before_symbolizing(self):
        harness.check_annotate_after_an_early_exit(self, harness.gdb)

    def test_crash_during_record_reaches_the_user(self):
        rc, out = harness.gdb(["break main", "run", "strobe record --frequency 500", "bt 1",
                               "strobe profile"], harness.fixture("crash"), ["1"])
        self.assertIn("Program received signal SIGSEGV, Segmentation fault.", out)
        self.assertRegex(out, r"the process received signal SIGSEGV \(11\); [1-9]\d* samples")
        self.assertRegex(out, r"#0 +main \(.*crash\.c")
        self.assertIn("spin_for", harness.function_percentages(out))

    def test_crash_during_a_background_capture_reaches_the_user(self):
        rc, out = harness.gdb(["break main", "run", "strobe start --no-resume --frequency 500",
                               "continue", "info breakpoints"], harness.fixture("crash"), ["1"])
        self.assertIn("Program received signal SIGSEGV, Segmentation fault.", out)
        self.assertRegex(
            out, r"strobe: sampling ended: the process received signal SIGSEGV \(11\); [1-9]")
        self.assert_no_leftovers(out)

    def test_stop_while_the_process_runs(self):
        rc, out = harness.gdb(["break main", "run", "strobe start --frequency 500", "strobe stop",
                               "info breakpoints"], harness.fixture("demo"), ["8"])
        self.assertEqual(rc, 0, out)
        self.assertIn("strobe: sampling ended: 'strobe stop' was given", out)
        self.assertNotIn("waiting on the debugger", out)
        self.assert_no_leftovers(out)

    # A script that keeps GDB busy keeps the program from running: said, not an empty capture.
    def test_a_command_that_keeps_gdb_busy_is_named_at_the_end(self):
        rc, out = harness.gdb(["break main", "run", "strobe start --frequency 500",
                               "shell sleep 1.5", "strobe stop"], harness.fixture("demo"), ["8"])
        self.assertEqual(rc, 0, out)
        waited = re.search(r"strobe: sampling ended: 'strobe stop' was given; .*; for ([\d.]+) s "
                           r"the program stood stopped, waiting on the debugger, and no samples "
                           r"were taken: .* 'strobe record --duration' samples a set time", out)
        self.assertIsNotNone(waited, out)
        self.assertGreaterEqual(float(waited.group(1)), 1.3, out)


class BadInputTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def assert_one_error_line(self, out, expected):
        errors = [line for line in out.splitlines() if line.startswith("error:")]
        self.assertEqual(errors, [expected], out)

    def test_unknown_subcommand(self):
        rc, out = harness.gdb(["strobe frobnicate"])
        self.assertNotEqual(rc, 0)
        self.assertEqual(out.strip(), "error: unknown subcommand 'frobnicate'; try 'strobe help'")

    def test_dash_dash_help_prints_the_subcommands_help(self):
        rc, out = harness.gdb(["strobe step --count 5 --help", "strobe mem -h"])
        self.assertEqual(rc, 0, out)
        self.assertIn("Usage: strobe step [OPTIONS]", out)
        self.assertIn("-n, --count N", out)
        self.assertIn("  mem table    heap usage", out)
        self.assertNotIn("error:", out)

    def test_record_without_a_process(self):
        rc, out = harness.gdb(["strobe record"])
        self.assertNotEqual(rc, 0)
        self.assertEqual(out.strip(), "error: no process; launch or attach to one first "
                                      "(strobe needs a running process)")

    def test_an_unsupported_architecture_is_refused(self):
        harness.require_i386_programs()
        commands = ["strobe record --duration 0.2", "strobe step --count 2", "strobe mem start"]
        rc, out = harness.gdb(["starti", *commands, "info breakpoints"],
                              harness.fixture("spin-i386"))
        errors = [line for line in out.splitlines() if line.startswith("error:")]
        self.assertEqual(errors, [harness.UNSUPPORTED_I386] * len(commands), out)
        self.assertIn("No breakpoints or watchpoints.", out)

    def test_start_twice(self):
        rc, out = harness.gdb(["break main", "run", "strobe start --no-resume",
                               "strobe start --no-resume", "strobe stop"],
                              harness.fixture("demo"), ["1"])
        self.assert_one_error_line(out, "error: sampling is already running; 'strobe stop' ends it")
        self.assertIn("strobe: sampling ended: 'strobe stop' was given", out)

    def test_a_failing_command_stops_a_gdb_script(self):
        with tempfile.NamedTemporaryFile("w", suffix=".gdb", delete=False) as script:
            script.write("strobe profile\necho not reached\\n\n")
        try:
            rc, out = harness.gdb([f"source {script.name}"])
        finally:
            os.unlink(script.name)
        self.assertNotEqual(rc, 0)
        self.assertNotIn("not reached", out)
        self.assertTrue(re.search(r"error: nothing captured yet", out), out)


if __name__ == "__main__":
    unittest.main()
