"""strobe in GDB: captures of a launched, an attached and a remote (gdbserver) process, and of a
multi-threaded one; the saved capture reads back the same in strobe-report.

Captures that want many samples quickly pass --overhead 100 (stops may last as long as the runs
between them) instead of the default 25 %, which lowers 1000 Hz to a few hundred on a slow
machine."""
import os
import re
import tempfile
import time
import unittest

import harness

ROW = re.compile(r"\s*\d+\s+[\d.]+%")
SAMPLES = harness.ACCURACY_SAMPLES


def require_gdb():
    harness.require_built(harness.GDB_SCRIPT)


def sample_count(report):
    return int(re.search(r"strobe profile: (\d+) samples", report).group(1))


def table_rows(report):
    return [line.rstrip() for line in report.splitlines() if ROW.match(line)]


class LaunchedDemoTest(unittest.TestCase):
    """One capture of the demo that GDB launched, examined by several tests."""

    @classmethod
    def setUpClass(cls):
        require_gdb()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.trace = os.path.join(cls.tmp.name, "demo.strobe")
        cls.rc, cls.out = harness.gdb(
            # A sample count, not a duration: a loaded machine slows the stops, and with them the
            # rate, and the accuracy check needs its samples.
            ["break main", "run",
             f"strobe record --samples {SAMPLES} --frequency 1000 --overhead 100",
             "echo <profile>\\n", "strobe profile --by function", "echo </profile>\\n",
             f"strobe save {cls.trace}", "strobe status", "info breakpoints",
             "info signals SIG63"],
            harness.fixture("demo"), ["120"])
        cls.profile = cls.out.split("<profile>")[1].split("</profile>")[0]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_record_ends_after_the_sample_count(self):
        self.assertEqual(self.rc, 0, self.out)
        self.assertIn(f"strobe: sampling ended: {SAMPLES} sample stops were taken", self.out)

    def test_profile_matches_the_demo_construction(self):
        self.assertEqual(sample_count(self.profile), SAMPLES, self.profile)
        harness.assert_demo_shares(self, self.profile)

    def test_sample_stops_are_taken_inside_gdbs_wait(self):
        # GDB never sees them: strobe takes them where GDB's waitpid() reports them (WaitTap).
        stops, unseen = harness.routine_stops(self, self.out)
        # Seen by GDB: the first (it sets the stack depth), the last, one a second to name what
        # was sampled, and any whose stack strobe's unwinder leaves to GDB.
        self.assertEqual(stops, SAMPLES, self.out)
        self.assertGreaterEqual(unseen, 0.9 * stops, self.out)

    def test_gdb_is_left_as_it_was(self):
        self.assertNotIn("catchpoint", self.out)
        self.assertRegex(self.out, r"SIG63\s+Yes\s+Yes\s+Yes")

    def test_strobe_report_reads_the_saved_capture_back(self):
        saved = f"strobe: saved {sample_count(self.profile)} samples of 1 thread to {self.trace}"
        self.assertIn(saved, self.out)
        rc, offline = harness.run([harness.STROBE_REPORT, self.trace, "profile"])
        self.assertEqual(rc, 0, offline)
        self.assertEqual(table_rows(offline), table_rows(self.profile))


class AttachedAndRemoteTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def test_attach_samples_and_the_process_outlives_the_detach(self):
        with harness.Background([harness.fixture("demo"), "0"]) as demo:
            rc, out = harness.gdb([f"attach {demo.pid}",
                                   "strobe record --duration 2 --frequency 1000 --overhead 100",
                                   "strobe profile", "detach"])
            self.assertEqual(rc, 0, out)
            self.assertIn("the duration was reached", out)
            harness.assert_demo_shares(self, out, 5)
            time.sleep(0.5)  # a stray sample signal would kill it now
            self.assertIsNone(demo.proc.poll(), out)

    def test_gdbserver_on_localhost(self):
        port = harness.free_port()
        # gdbserver 13 warns on every stop here ("regsets_store_inferior_registers: Bad address",
        # strobe or not), and Background never reads its pipe: a full pipe would block gdbserver.
        server = ["sh", "-c", f"exec gdbserver 127.0.0.1:{port} {harness.fixture('demo')} 10 "
                              ">/dev/null 2>&1"]
        with harness.Background(server):
            rc, out = harness.gdb([f"target remote 127.0.0.1:{port}", "break main", "continue",
                                   "strobe record --duration 3 --frequency 500 --overhead 100",
                                   "strobe profile",
                                   "kill"], harness.fixture("demo"))
        self.assertEqual(rc, 0, out)
        self.assertIn("the duration was reached", out)
        # A remote stop costs a few round trips, so a loaded machine gets few samples: check
        # that they are the demo's, not the demo's exact shares.
        self.assertGreaterEqual(sample_count(out), 100, out)
        ranking = [f for f in harness.function_percentages(out) if f.startswith("compute_")]
        self.assertEqual(ranking, ["compute_sixty", "compute_thirty", "compute_ten"], out)


class StacksTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def test_deep_stacks_name_every_caller(self):
        harness.check_calls_stacks(self, harness.gdb, ["break leaf", "run", "delete"])


class ThreadsTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def test_every_thread_is_sampled(self):
        rc, out = harness.gdb(["break main", "run",
                               "strobe record --duration 2 --frequency 200 --overhead 100",
                               "strobe status", "strobe profile --by thread", "strobe profile",
                               "strobe profile --cpu"],
                              harness.fixture("threads"), ["4"])
        self.assertEqual(rc, 0, out)
        # main, the parked thread, 8 workers, and short-lived threads that came and went
        threads = int(re.search(r"samples of (\d+) threads", out).group(1))
        self.assertGreaterEqual(threads, 10, out)
        thread_rows = re.findall(r"^\s*(\d+)\s+threads\s", out, re.MULTILINE)  # tid, name
        self.assertGreaterEqual(len(set(thread_rows)), 10, out)
        wall, cpu = out.split("strobe profile: ")[-2:]  # by function: wall-clock, on-CPU
        self.assertIn("(on-CPU", cpu)
        self.assertEqual(next(iter(harness.function_percentages(cpu))), "busy_worker", cpu)
        harness.assert_parked_thread_off_cpu(self, wall, cpu)
        # Each thread is signalled and sampled on its own inside GDB's waitpid(), the others
        # running.
        stops, private = harness.routine_stops(self, out)
        self.assertGreaterEqual(private, 0.9 * stops, out)

    def test_every_thread_is_sampled_in_non_stop_mode(self):
        # strobe signals the threads of a process GDB traces itself one by one and reads each
        # stopped thread alone, so GDB's non-stop mode, which keeps the other threads running,
        # leaves none unread (through gdbserver, strobe still reads every thread at a stop, and
        # says that non-stop keeps it from doing so).
        rc, out = harness.gdb(["set non-stop on", "break main", "run",
                               "strobe record --duration 1 --frequency 200 --overhead 100",
                               "strobe profile --by thread"],
                              harness.fixture("threads"), ["4", "2"])
        self.assertEqual(rc, 0, out)
        self.assertNotIn("only the stopped thread can be sampled", out)
        # main, the parked thread, 2 workers, and short-lived threads that came and went
        threads = int(re.search(r"sampling ended: the duration was reached; \d+ samples of (\d+) "
                                r"threads", out).group(1))
        self.assertGreaterEqual(threads, 4, out)


if __name__ == "__main__":
    unittest.main()
