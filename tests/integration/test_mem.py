"""Heap tracking (`strobe mem`, spec 003) in lldb-19 and in GDB, on the fixtures of examples/mem.

Every scenario runs once per debugger, in one debugger session that batches its commands; the
output is cut at markers the session prints between commands. Expected tables come from spec
003's vectors (T2, T3, Fig. 3) or from the ledger line each fixture prints at exit, its own count
of what it allocated and freed."""
import os
import re
import subprocess
import tempfile
import time
import unittest

import harness

# Not anchored: GDB's "[Thread ... exited]" notes can share a line with the fixture's output.
LEDGER = re.compile(r"ledger: calls=(\d+) allocated=(\d+) freed=(\d+) peak=(\d+) live=(\d+) "
                    r"blocks=(\d+)")
LEDGER_CALLS = re.compile(r"ledger: ([a-z_ \[\]]+)=(\d+)")
AT_EXIT = "strobe: the process exited with status 0; the heap as strobe saw it:"
AT_CRASH = "strobe: the process received signal SIGSEGV (11); the heap as strobe saw it:"
# The columns of spec 003's table, as `strobe mem table --json` names them.
SPEC_COLUMNS = ("size", "min", "max", "malloc", "realloc", "free", "memalign")
RING = 8  # memchurn's live blocks


def ledger(out):
    """The fixture's own count: totals and calls per function."""
    m = LEDGER.search(out)
    if not m:
        raise AssertionError(f"no ledger line in:\n{out}")
    keys = ("calls", "allocated", "freed", "peak", "live", "blocks")
    counts = dict(zip(keys, map(int, m.groups())))
    counts["by function"] = {name: int(n) for name, n in LEDGER_CALLS.findall(out)
                             if name != "calls"}
    return counts


def spec_row(row):
    return tuple(row[c] for c in SPEC_COLUMNS)


def rows(doc):
    """{key: row} of a `strobe mem table --json` document."""
    return {row["key"]: row for row in doc["rows"]}


class Lldb(harness.LldbSession):
    @staticmethod
    def stop_at(function, ignore=0):
        return f"breakpoint set --name {function} --ignore-count {ignore}"

    # strobe's breakpoints are hidden from `breakpoint list` but are breakpoints of the target.
    count_breakpoints = "script print('breakpoints:', lldb.target.GetNumBreakpoints())"

    @staticmethod
    def strobe_breakpoints(section, user_breakpoints):
        return int(re.search(r"^breakpoints: (\d+)$", section, re.MULTILINE).group(1)) - \
            user_breakpoints

    @staticmethod
    def crash_seen(out):
        return "stop reason = signal SIGSEGV" in out

    @staticmethod
    def remote(port, program, args):
        server = ["/usr/lib/llvm-19/bin/lldb-server", "gdbserver", f"127.0.0.1:{port}", "--",
                  program, *args]
        if not os.path.exists(server[0]):
            raise unittest.SkipTest("lldb-server-19 is not installed")
        connect = [f"target create {program}", f"gdb-remote 127.0.0.1:{port}"]
        return server, connect, "continue"


class Gdb(harness.GdbSession):
    @staticmethod
    def stop_at(function, ignore=0):
        return f"break {function}" if not ignore else f"break {function}\nignore $bpnum {ignore}"

    count_breakpoints = "maint info breakpoints"

    @staticmethod
    def strobe_breakpoints(section, user_breakpoints):
        # strobe's are internal breakpoints (negative numbers) of the plain "breakpoint" type.
        return len(re.findall(r"^-\d+\s+breakpoint\s", section, re.MULTILINE))

    @staticmethod
    def crash_seen(out):
        return "Program received signal SIGSEGV" in out

    @staticmethod
    def remote(port, program, args):
        # gdbserver warns at every stop here and Background never reads its pipe.
        command = " ".join([f"exec gdbserver 127.0.0.1:{port}", program, *args, ">/dev/null 2>&1"])
        return ["sh", "-c", command], [f"target remote 127.0.0.1:{port}"], "continue"


class MemScenarios(harness.MarkedScenarios):
    """The scenarios, written once; LldbMem and GdbMem run them in their debugger."""
    debugger = None

    def setUp(self):
        harness.require_built(self.debugger.plugin)

    def session(self, steps, program=None, args=()):
        """Runs `steps`: (marker, command) pairs, a command alone, or a marker with several
        commands. Returns (whole output, {marker: output after it, up to the next})."""
        return self.marked(steps, program, args)

    def error_of(self, section):
        return [line for line in section.splitlines() if line.startswith("error:")]

    def assert_totals_equal_ledger(self, doc, counts, out):
        total = doc["total"]
        got = (total["allocated"], total["freed"], total["peakLiveBytes"], total["liveBytes"],
               total["liveBlocks"])
        want = (counts["allocated"], counts["freed"], counts["peak"], counts["live"],
                counts["blocks"])
        self.assertEqual(got, want, f"allocated, freed, peak, live, blocks\n{out}")

    # T2 in both free modes, the tables printed at exit, and the bad input around them.
    def test_t2_tables_at_exit_and_bad_input(self):
        d = self.debugger
        out, s = self.session(
            [("no process", "strobe mem start"), ("nothing yet", "strobe mem table"),
             d.stop_at("tracking_starts"), "run",
             ("unknown", "strobe mem start --functions nope"),
             ("start", "strobe mem start"), ("twice", "strobe mem start"),
             ("continue", "continue"),
             ("callsite", "strobe mem table --json"),
             ("owner", "strobe mem table --frees owner --json"),
             ("bad sort", "strobe mem table --sort nope"),
             ("sorted", "strobe mem table --sort key --json")],
            harness.fixture("memlibs"), ["t2"])
        self.assertIn("no process; launch or attach to one first",
                      self.error_of(s["no process"])[0])
        self.assertIn("nothing captured yet", self.error_of(s["nothing yet"])[0])
        [unknown] = self.error_of(s["unknown"])
        self.assertIn("no allocation function could be hooked", unknown)
        self.assertIn("not allocation functions strobe hooks: nope", s["unknown"])
        # memlibs is C: one line says the operators are absent, none of their names is listed.
        self.assertIn("operator new / delete: not in this process", s["start"])
        self.assertNotIn("_Znwm", s["start"])
        self.assertEqual(self.error_of(s["start"]), [], out)
        self.assertIn("heap tracking is already on", self.error_of(s["twice"])[0])
        self.assertIn("--sort takes a column", self.error_of(s["bad sort"])[0])

        callsite = rows(self.json_of(s["callsite"], out))
        self.assertEqual(spec_row(callsite["liba.so"]), (100, 0, 300, 1, 0, 2, 1), out)
        self.assertEqual(spec_row(callsite["libb.so"]), (-20, -50, 50, 1, 1, 1, 0), out)
        owner = rows(self.json_of(s["owner"], out))
        self.assertEqual([(owner[k]["size"], owner[k]["min"], owner[k]["max"])
                          for k in ("liba.so", "libb.so")], [(0, 0, 300), (80, 0, 80)], out)
        self.assertEqual([r["key"] for r in self.json_of(s["sorted"], out)["rows"]],
                         ["liba.so", "libb.so"], out)
        counts = ledger(out)
        self.assert_totals_equal_ledger(self.json_of(s["callsite"], out), counts, out)
        total = self.json_of(s["callsite"], out)["total"]
        self.assertEqual(sum(total[c] for c in ("malloc", "realloc", "free", "memalign")),
                         counts["calls"], out)

        # Printed by itself when the process exited: the same table in text, then the leak.
        at_exit = s["continue"].split(AT_EXIT, 1)[1]
        self.assertRegex(at_exit, r"\n\s*100 B\s+0 B\s+300 B\s+1\s+0\s+2\s+1\s.*liba\.so\n")
        self.assertRegex(at_exit, r"\n\s*-20 B\s+-50 B\s+50 B\s+1\s+1\s+1\s+0\s.*libb\.so\n")
        self.assertRegex(at_exit, r"\n80 B\s+1\s+realloc\s+libb\.so\n\s+#1 libb\.so!libb_realloc")

    def test_t3_per_invocation(self):
        out, s = self.session(
            [self.debugger.stop_at("tracking_starts"), "run", "strobe mem start", "continue",
             ("per", "strobe mem table --per invocation --json"),
             ("whole", "strobe mem table --json")],
            harness.fixture("memlibs"), ["t3"])
        per = self.json_of(s["per"], out)["rows"]
        got = [(r["key"], r["size"], r["min"], r["max"], r["malloc"], r["free"]) for r in per]
        self.assertEqual(got, [("liba.so", 30, 0, 30, 2, 0), ("libb.so", 5, 0, 5, 1, 0),
                               ("liba.so", -10, -10, 0, 0, 1), ("libb.so", 2, 0, 7, 1, 1)], out)
        whole = rows(self.json_of(s["whole"], out))
        self.assertEqual(spec_row(whole["liba.so"]), (20, 0, 30, 2, 0, 1, 0), out)
        self.assertEqual(spec_row(whole["libb.so"]), (7, 0, 12, 2, 0, 1, 0), out)
        self.assert_totals_equal_ledger(self.json_of(s["whole"], out), ledger(out), out)

    # Fig. 3's call path under every attribution mode, its leaks, and `mem stop`.
    def test_fig3_attribution_leaks_and_stop(self):
        d = self.debugger
        modes = [(by, mode) for by in ("library", "function") for mode in ("first", "last", "all")]
        out, s = self.session(
            [d.stop_at("tracking_starts"), d.stop_at("tracking_ends"), "run", "strobe mem start",
             ("during", d.count_breakpoints), "continue",
             *[(f"{by}-{mode}", f"strobe mem table --by {by} --attribution {mode} --json")
               for by, mode in modes],
             ("leaks", "strobe mem leaks"), ("stop", "strobe mem stop"),
             ("after", d.count_breakpoints), ("status", "strobe mem status"),
             ("exit", "continue")],
            harness.fixture("memlibs"), ["fig3", "10"])
        allocated, freed = sum(range(100, 110)), sum(range(100, 110, 2))  # every other block freed
        grows = (allocated, 0, allocated, 10, 0, 0, 0)
        frees = (-freed, -freed, 0, 0, 0, 5, 0)
        expected = {
            ("library", "first"): {"liba.so": grows, "libb.so": frees},
            ("library", "last"): {"libb.so": (allocated - freed, 0, allocated, 10, 0, 5, 0)},
            ("library", "all"): {"liba.so": grows,
                                 "libb.so": (allocated - freed, 0, allocated, 10, 0, 5, 0)},
            ("function", "first"): {"liba.so!func_a0": grows, "libb.so!libb_free": frees},
            ("function", "last"): {"libb.so!func_b0": grows, "libb.so!libb_free": frees},
            ("function", "all"): {"liba.so!func_a0": grows, "liba.so!func_a1": grows,
                                  "libb.so!func_b0": grows, "libb.so!libb_free": frees},
        }
        for by, mode in modes:
            with self.subTest(by=by, attribution=mode):
                table = rows(self.json_of(s[f"{by}-{mode}"], out))
                self.assertEqual({k: spec_row(r) for k, r in table.items()},
                                 expected[(by, mode)], out)
        frames = re.findall(r"#\d+ (\S+)", s["leaks"])
        self.assertEqual(frames[:6], ["libb.so!func_b0", "liba.so!func_a1", "liba.so!func_a0",
                                      "memlibs!func_0", "memlibs!fig3", "memlibs!main"], out)
        self.assertRegex(s["leaks"], rf"\n{allocated - freed} B\s+5\s+malloc\s+liba\.so\n")
        self.assertGreater(d.strobe_breakpoints(s["during"], 2), 0, out)
        self.assertEqual(d.strobe_breakpoints(s["after"], 2), 0, out)
        self.assertIn("heap tracking ended; 15 events kept", s["stop"])
        self.assertIn("not tracking the heap", s["status"])
        self.assertNotIn("the heap as strobe saw it", out)  # tracking was off at the exit
        counts = ledger(out)
        self.assert_totals_equal_ledger(self.json_of(s["library-first"], out), counts, out)

    def ledger_run(self, program, args):
        out, s = self.session(
            [self.debugger.stop_at("tracking_starts"), "run", "strobe mem start", "continue",
             ("table", "strobe mem table --json"), ("status", "strobe mem status")],
            harness.fixture(program), args)
        doc = self.json_of(s["table"], out)
        counts = ledger(out)
        self.assert_totals_equal_ledger(doc, counts, out)
        return doc, counts, out

    def test_threads_total_equals_the_ledger(self):
        doc, counts, out = self.ledger_run("memthreads", ["4", "200"])
        program = rows(doc)["memthreads"]
        calls = counts["by function"]
        self.assertEqual((program["malloc"], program["free"], program["untrackedFrees"]),
                         (calls["malloc"], calls["free"], 0), out)

    def test_cxx_total_equals_the_ledger(self):
        doc, counts, out = self.ledger_run("memcxx", ["20"])
        calls, total = counts["by function"], doc["total"]
        # Each new is one event though libstdc++'s operator new calls malloc, each delete one
        # though sized delete forwards to delete, which jumps to free.
        self.assertEqual(total["malloc"] + total["memalign"],
                         calls["operator new"] + calls["operator new[]"], out)
        self.assertEqual((total["free"], total["untrackedFrees"]), (calls["free"], 0), out)
        self.assertRegex(out, r"\n240 B\s+5\s+operator new\s+memcxx\n")

    def test_edge_cases_equal_the_ledger(self):
        doc, counts, out = self.ledger_run("memedges", [])
        calls, total = counts["by function"], doc["total"]
        self.assertEqual(total["malloc"], calls["malloc"] + calls["calloc"], out)
        self.assertEqual(total["realloc"], calls["realloc"], out)
        self.assertEqual(total["memalign"], sum(calls[f] for f in (
            "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc")), out)
        # free(before): a block allocated before tracking started, which the ledger never saw.
        self.assertEqual((total["free"], total["untrackedFrees"]), (calls["free"] + 1, 1), out)

    def test_a_step_trace_to_the_exit_counts_the_calls_it_steps_through(self):
        # Each hook's breakpoint is met by a step; the step runs its handler and goes on. The
        # exit ends the trace: the tables follow it, and trace and events stay one capture.
        out, s = self.session(
            [self.debugger.stop_at("main"), "run", "strobe mem start",
             ("step", "strobe step --count 200000 --quiet"), ("status", "strobe status")],
            harness.fixture("memchurn"), ["200", "4"])
        stepped = re.search(r"strobe: stepped (\d+) instructions of thread \d+ in .*; "
                            r"the process exited with status 0;", s["step"])
        self.assertIsNotNone(stepped, out)
        self.assertGreater(int(stepped.group(1)), 50000, out)  # all of memchurn's work
        at_exit = s["step"].split(AT_EXIT, 1)[1]
        self.assertRegex(at_exit, r"\n876 B\s+0 B\s+1\.64 KiB\s+200\s+0\s+200\s+0\s.*memchurn\n")
        self.assertIn("holding a capture (live): 400 heap events, 1 step trace\n", s["status"])

    def test_crash_while_tracking(self):
        out, s = self.session(
            [self.debugger.stop_at("tracking_starts"), "run", "strobe mem start",
             ("crash", "continue"), ("table", "strobe mem table --json"),
             self.debugger.kill],
            harness.fixture("memlibs"), ["crash"])
        self.assertTrue(self.debugger.crash_seen(s["crash"]), out)
        self.assertIn(AT_CRASH, s["crash"])
        table = rows(self.json_of(s["table"], out))
        allocated, freed = 100 + 101 + 102 + 103, 100 + 102
        self.assertEqual(spec_row(table["liba.so"]), (allocated, 0, allocated, 4, 0, 0, 0), out)
        self.assertEqual(spec_row(table["libb.so"]), (-freed, -freed, 0, 0, 0, 2, 0), out)

    def test_attach_mid_run(self):
        d = self.debugger
        with harness.Background([harness.fixture("memchurn"), "0"]) as churn:
            # Three ring turns at least: every block live at the stop was allocated after attach.
            out, s = self.session(
                [d.attach(churn.pid), "strobe mem start", d.stop_at("checkpoint", 3),
                 "continue", ("table", "strobe mem table --json"), ("detach", "detach")])
            time.sleep(0.5)
            self.assertIsNone(churn.proc.poll(), "a hook left behind would kill it: " + out)
        total = self.json_of(s["table"], out)["total"]
        self.assertEqual(total["liveBlocks"], RING, out)
        self.assertGreaterEqual(total["malloc"], 3 * RING, out)
        # The blocks live at attach are freed untracked; the ring turn interrupted by the attach
        # moves one of them into the counted frees or out of both.
        self.assertEqual(total["untrackedFrees"] + total["malloc"] - total["free"], RING, out)
        self.assertGreaterEqual(total["untrackedFrees"], RING - 1, out)

    def test_remote_target(self):
        port = harness.free_port()
        server, connect, resume = self.debugger.remote(port, harness.fixture("memlibs"), ["t2"])
        with harness.Background(server):
            out, s = self.session(
                [*connect, self.debugger.stop_at("tracking_starts"), resume, "strobe mem start",
                 ("exit", "continue"), ("table", "strobe mem table --json")])
        self.assertIn(AT_EXIT, s["exit"])
        table = rows(self.json_of(s["table"], out))
        self.assertEqual(spec_row(table["liba.so"]), (100, 0, 300, 1, 0, 2, 1), out)
        self.assertEqual(spec_row(table["libb.so"]), (-20, -50, 50, 1, 1, 1, 0), out)

    def test_with_sampling_in_one_capture(self):
        with tempfile.TemporaryDirectory() as scratch:
            trace = os.path.join(scratch, "churn.strobe")
            out, s = self.session(
                [self.debugger.stop_at("tracking_starts"), "run", "strobe mem start",
                 ("record", "strobe record --duration 1 --frequency 200"),
                 ("table", "strobe mem table --json"), ("profile", "strobe profile"),
                 ("save", f"strobe save {trace}"), self.debugger.kill],
                harness.fixture("memchurn"), ["0"])
            rc, offline = harness.run([harness.STROBE_REPORT, trace, "mem", "table", "--json"])
        live = self.json_of(s["table"], out)
        samples = harness.ended(s["record"])[1]
        self.assertGreater(samples, 0, out)
        self.assertGreater(live["events"], 2 * RING, out)
        self.assertIn("churn", harness.function_percentages(s["profile"]), out)
        self.assertRegex(s["save"], rf"saved {samples} samples of 1 thread, {live['events']} "
                                    r"heap events to ")
        self.assertEqual(rc, 0, offline)
        self.assertEqual(self.json_of(offline, offline), live, offline)


class LldbMem(MemScenarios, unittest.TestCase):
    debugger = Lldb

    # LLDB deletes breakpoints by number even when their name forbids it; GDB's internal ones are
    # out of its user's reach. Numbers 2-10: strobe's first nine, after the user's 1.
    def test_hooks_a_user_deleted_are_planted_again_at_continue(self):
        out, s = self.session(
            [self.debugger.stop_at("tracking_starts"), "run", "strobe mem start",
             ("delete", "breakpoint delete 2-10"), ("continue", "continue"),
             ("table", "strobe mem table --json")],
            harness.fixture("memchurn"), ["300"])
        self.assertIn("9 breakpoints deleted", s["delete"], out)
        self.assertIn("strobe: a debugger command deleted 9 of strobe's heap breakpoints; "
                      "planted again", s["continue"], out)
        total, calls = self.json_of(s["table"], out)["total"], ledger(out)["by function"]
        self.assertEqual((total["malloc"], total["free"]), (calls["malloc"], calls["free"]), out)
        self.assert_totals_equal_ledger(self.json_of(s["table"], out), ledger(out), out)


class GdbMem(MemScenarios, unittest.TestCase):
    debugger = Gdb


if __name__ == "__main__":
    unittest.main()
