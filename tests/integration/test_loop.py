"""Loop traces (`strobe loop`, spec 000, issue 5) in lldb-19 and in GDB, on examples/loop.

Every scenario runs once per debugger, in one debugger session whose output is cut at markers
printed between commands. Expected traces come from the fixtures' own disassembly (objdump, for
the straight-line bodies), from the fixture's own iteration counter, or from `--verify`, which
single-steps one iteration with the stepper that test_step.py checks against each debugger's
stepi."""
import os
import re
import subprocess
import tempfile
import unittest

import harness

ACCURACY = 0.99  # issue 5: accuracy >= 99 % against --verify on the deterministic fixtures


def source_line(file, text):
    return harness.source_line(os.path.join("loop", file), text)


class Disassembly:
    """A fixture's code as objdump sees it: {function: [(address, mnemonic, operands)]}."""

    def __init__(self, program):
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", program], check=True,
                             capture_output=True, text=True).stdout
        self.functions = {}
        current = None
        for line in out.splitlines():
            header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
            if header:
                current = self.functions.setdefault(header.group(1), [])
                continue
            insn = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
            if insn and current is not None:
                current.append((int(insn.group(1), 16), insn.group(2), insn.group(3)))

    def start(self, function):
        return self.functions[function][0][0]

    def straight_line_trace(self, function):
        """The addresses one call of a function without branches runs, calls expanded: what a
        single-stepped call gives. Fails if the function (or a callee) branches."""
        trace = []
        for address, mnemonic, operands in self.functions[function]:
            trace.append(address)
            if mnemonic.startswith("j"):
                raise AssertionError(f"{function} branches at {address:#x}: not straight-line")
            if mnemonic.startswith("call"):
                trace += self.straight_line_trace(re.search(r"<(.+)>", operands).group(1))
            if mnemonic.startswith("ret"):
                return trace
        raise AssertionError(f"{function} has no ret")

    def innermost_loop_around_call(self, function, callee):
        """(first, last) address of the smallest backward jump in `function` whose range holds the
        call to `callee`: where the loop around that call lies."""
        calls = [a for a, m, o in self.functions[function]
                 if m.startswith("call") and f"<{callee}>" in o]
        loops = []
        for address, mnemonic, operands in self.functions[function]:
            target = re.match(r"([0-9a-f]+) <", operands)
            if mnemonic.startswith("j") and target and int(target.group(1), 16) <= calls[0] < \
                    address:
                loops.append((int(target.group(1), 16), address))
        return min(loops, key=lambda loop: loop[1] - loop[0])

    def function_at(self, address):
        for name, insns in self.functions.items():
            if insns and insns[0][0] <= address <= insns[-1][0]:
                return name
        return None

    def function_runs(self, rows, bias, leave_out):
        """The trace's functions in execution order, by the symbol table (not by the names strobe
        gives them), one entry per run of consecutive rows of one function and call site, leaving
        out the function the loop is in."""
        runs = []
        for row in rows:
            function = self.function_at(int(row["address"], 16) - bias)
            if function == leave_out:
                continue
            if not runs or runs[-1] != (function, row["context"]):
                runs.append((function, row["context"]))
        return runs


def edit_distance(a, b):
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def accuracy(got, truth):
    """1 - normalised edit distance, the measure spec 000 and --verify use."""
    return 1 - edit_distance(got, truth) / max(len(got), len(truth), 1)


class LoopScenarios(harness.MarkedScenarios):
    """The scenarios, written once; LldbLoop and GdbLoop run them in their debugger."""
    debugger = None

    def setUp(self):
        harness.require_built(self.debugger.plugin)

    def session(self, steps, program, args):
        """Runs `steps`: commands, or (marker, command...) tuples. Returns (whole output,
        {marker: output after it, up to the next marker})."""
        return self.marked([*steps, self.debugger.kill], harness.fixture(program), args)

    def error_of(self, section, out):
        errors = [line for line in section.splitlines() if line.startswith("error:")]
        self.assertEqual(len(errors), 1, f"one error expected in:\n{section}\n--- whole:\n{out}")
        return errors[0]

    def assert_verified(self, doc, out):
        summary = doc["summary"]
        self.assertIn("accuracy", summary, out)
        self.assertGreater(summary["truthInstructions"], 0, out)
        # The lengths tell a wrong reference (a stepped iteration that began off the head) from a
        # wrong trace.
        self.assertGreaterEqual(summary["accuracy"], ACCURACY,
                                f"reference of {summary['truthInstructions']} instructions, trace "
                                f"of {summary['pathInstructions']}\n{out}")
        self.assertFalse(summary["lowConfidence"], out)

    def assert_names(self, rows, code, bias, out):
        named = [row["element"].rsplit(":", 1)[0] for row in rows]
        symbols = [code.function_at(int(row["address"], 16) - bias) for row in rows]
        self.assertEqual(named, symbols, out)

    def variable(self, section, name):
        return int(re.search(rf"^{name} = (\d+)$", section, re.MULTILINE).group(1))

    # Scenarios 1, 5, 6 and 7 on the spec's func_M program, in one session; each a subtest, so
    # that one failing does not hide the others.
    def test_funcm_trace_hottest_save_and_bad_input(self):
        program = harness.fixture("loop_funcm")
        code = Disassembly(program)
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.path.join(tmp, "funcm.strobe")
            out, s = self.session(
                [("no process", "strobe loop --at func_M --duration 1"),
                 "b main", "run",
                 ("no profile", "strobe loop --hottest"),
                 ("no code", "strobe loop --at no_such_function"),
                 ("straight", f"strobe loop --at {source_line('funcm.c', 'double seconds')} "
                              "--duration 0.2"),
                 ("bad split", "strobe loop --at func_M --split bogus"),
                 # main's loop shows only in stacks deep enough to reach it from func_A
                 ("record", "strobe record --duration 1 --stack 8"),
                 ("hottest", "strobe loop --hottest --duration 1 --json"),
                 ("funcm", "strobe loop --at func_M --iterations 10 --duration 30 --verify --json"),
                 ("save", f"strobe save {saved}")],
                "loop_funcm", ["120"])
            offline = [harness.run([harness.STROBE_REPORT, saved, "loop", "--json"])
                       for _ in range(2)]
            offline_text = harness.run([harness.STROBE_REPORT, saved, "loop"])

        doc = self.json_of(s["funcm"], out)
        rows = doc["rows"]
        bias = int(doc["head"], 16) - code.start("func_M")
        with self.subTest("func_M: A, B x3, C from distinct call sites"):
            self.assertTrue(doc["wholeFunction"], out)
            runs = code.function_runs(rows, bias, "func_M")
            self.assertEqual([f for f, _ in runs],
                             ["func_A", "func_B", "func_B", "func_B", "func_C"], out)
            self.assertEqual(len({site for _, site in runs}), 5, f"call sites alike:\n{out}")
        with self.subTest("func_M: rows named as the symbol table names them"):
            self.assert_names(rows, code, bias, out)
        with self.subTest("func_M: accuracy against --verify"):
            self.assert_verified(doc, out)
        with self.subTest("func_M: accuracy against the code"):
            truth = [a + bias for a in code.straight_line_trace("func_M")]
            got = [int(row["address"], 16) for row in rows]
            self.assertGreaterEqual(accuracy(got, truth), ACCURACY, out)

        with self.subTest("saved capture: the same trace, the same way every time"):
            for rc, text in offline:
                self.assertEqual(rc, 0, text)
            self.assertEqual(offline[0][1], offline[1][1], "two rebuilds of one file differ")
            self.assertEqual(self.json_of(offline[0][1], offline[0][1])["rows"], rows,
                             offline[0][1])
            rc, text = offline_text
            self.assertEqual(rc, 0, text)
            listed = re.findall(r"^\s*\d+\s+(\S+)\s.*?(0x[0-9a-f]+)\s", text, re.MULTILINE)
            self.assertEqual(listed, [(row["element"], row["address"]) for row in rows], text)

        with self.subTest("--hottest: main's inner loop, the one calling func_M"):
            hottest = self.json_of(s["hottest"], out)
            self.assertFalse(hottest["wholeFunction"], out)
            first, last = code.innermost_loop_around_call("main", "func_M")
            self.assertTrue(first <= int(hottest["head"], 16) - bias <= last,
                            f"head {hottest['head']} is not in main's loop "
                            f"{first + bias:#x}-{last + bias:#x}:\n{out}")
            self.assertEqual([f for f, _ in code.function_runs(hottest["rows"], bias, "main")],
                             ["func_M", "func_A", "func_M", "func_B", "func_M", "func_B",
                              "func_M", "func_B", "func_M", "func_C", "func_M"], out)

        with self.subTest("bad input: one clear error each"):
            self.assertIn("no process; launch or attach to one",
                          self.error_of(s["no process"], out))
            self.assertIn("--hottest needs a profile", self.error_of(s["no profile"], out))
            self.assertIn("no code at 'no_such_function'", self.error_of(s["no code"], out))
            self.assertIn("--split must be auto, marker, expr:",
                          self.error_of(s["bad split"], out))
        with self.subTest("a capture replaced unsaved is said once, the timing probe's never"):
            for section in ("hottest", "funcm"):
                self.assertEqual(s[section].count("was not saved and is replaced"), 1,
                                 s[section])
        with self.subTest("bad input: a line of straight code in main is in no loop"):
            self.assertIn("is not inside a loop", self.error_of(s["straight"], out))

    # Scenario 2 (short iterations, by function and by the loop head's line) and a loop never
    # reached (7).
    def test_helper_short_iterations(self):
        out, s = self.session(
            ["b main", "run",
             # --overhead 20 and counted samples: at the loop's default budget a slow VM's stops
             # (0.8-1.6 ms in LLDB) leave 15-50 samples a second, too few to order the ~20
             # instructions of an iteration or to tell a rare off-path sample from a changing
             # path; a loaded CI's (~40 ms) leave a handful in 2 s at any budget.
             ("body", "strobe loop --at body --iterations 60 --duration 30 --overhead 20 --verify "
                      "--json"),
             ("line", f"strobe loop --at {source_line('helper.c', 'body(i);')} --iterations 60 "
                      "--duration 30 --overhead 20 --verify --json"),
             ("unreached", f"strobe loop --at {source_line('helper.c', 'sink += j;')} "
                           "--duration 0.5")],
            "loop_helper", ["120", "0"])
        for name in ("body", "line"):
            with self.subTest(at=name):
                self.assert_verified(self.json_of(s[name], out), out)
        line = self.json_of(s["line"], out)
        self.assertFalse(line["wholeFunction"], out)
        self.assertIn("body:0", [row["element"] for row in line["rows"]], out)

        # spin's inner loop never runs with 0 units: no trace, and what was gathered instead.
        _, samples = harness.ended(s["unreached"])
        self.assertIn(f"no complete iteration was sampled: {samples} samples of the thread, "
                      f"{samples} of them outside the loop", s["unreached"])
        self.assertNotRegex(s["unreached"], r"^\s*1\s+spin:", out)

    # A loop calling the C library through the PLT: the walk follows the stubs' jumps into memcpy
    # and strlen, whose samples had fallen off the path as contradictions (LOW CONFIDENCE).
    def test_library_calls_through_the_plt(self):
        out, s = self.session(
            ["b main", "run",
             ("body", "strobe loop --at body --iterations 60 --duration 30 --overhead 20 --json")],
            "loop_libc", ["120"])
        doc = self.json_of(s["body"], out)
        self.assertFalse(doc["summary"]["lowConfidence"], out)
        self.assertEqual(doc["summary"]["steppedOverCalls"], [], out)
        functions = {row["element"].rsplit(":", 1)[0] for row in doc["rows"]}
        self.assertTrue(any("memcpy" in name for name in functions), functions)
        self.assertTrue(any("strlen" in name for name in functions), functions)

    # Scenario 3: an unrolled body, exact against the code.
    def test_unrolled(self):
        program = harness.fixture("loop_unrolled")
        code = Disassembly(program)
        out, s = self.session(
            ["b main", "run",
             ("kernel", "strobe loop --at kernel --iterations 10 --duration 30 --verify --json")],
            "loop_unrolled", ["120"])
        doc = self.json_of(s["kernel"], out)
        self.assert_verified(doc, out)
        bias = int(doc["head"], 16) - code.start("kernel")
        truth = [a + bias for a in code.straight_line_trace("kernel")]
        self.assertGreater(len(truth), 16 * 4, "the fixture's loop is not unrolled")
        got = [int(row["address"], 16) for row in doc["rows"]]
        self.assertGreaterEqual(accuracy(got, truth), ACCURACY, out)

    # Scenario 4: the path changes between iterations; strobe must say so, not print a confident
    # trace.
    def test_varying_path_is_low_confidence(self):
        out, s = self.session(
            # Counted samples, not a duration: at the default budget a slow VM's LLDB took 16
            # samples in 1 s, none of them in the branch the trace left out; with --overhead 20,
            # a CI running two tests at once took 6 (stops of ~40 ms each).
            ["b main", "run",
             ("step", "strobe loop --at step --iterations 40 --duration 30 --overhead 20 --json"),
             ("text", "strobe loop --at step --iterations 40 --duration 30 --overhead 20")],
            "loop_varying", ["120"])
        summary = self.json_of(s["step"], out)["summary"]
        self.assertTrue(summary["lowConfidence"], out)
        self.assertGreater(summary["contradictingIterations"], 0, out)
        self.assertGreater(len(summary["contradictions"]), 0, out)
        for contradiction in summary["contradictions"]:
            self.assertGreater(contradiction["iterations"], 0, out)
            self.assertGreater(len(contradiction["sequence"]), 0, out)
        self.assertIn("LOW CONFIDENCE", s["text"])
        self.assertRegex(s["text"], r"\n  e\.g\. \S+:\d+")

    # Scenario 8: long iterations split by a marker: one partial sequence per iteration, several
    # samples in each (at the rate asked: --overhead 100 keeps slow stops from lowering it).
    # Until 20 iterations, not for a time: one VM ran 7 calls of 6000 units in a second, where
    # another ran 63, and its stops were as much slower; a third ran 12000 units in about 12 ms,
    # 2.4 sample periods. 40000 units leave several samples per call at any of these speeds.
    def test_marker_split_long_iterations(self):
        d = self.debugger
        out, s = self.session(
            ["b main", "run", ("before", d.print_variable("iteration")),
             ("loop", "strobe loop --at body --split marker --iterations 20 --duration 20 "
                      "--overhead 100 --json"),
             ("after", d.print_variable("iteration"))],
            "loop_helper", ["120", "40000"])
        calls = self.variable(s["after"], "iteration") - self.variable(s["before"], "iteration")
        summary = self.json_of(s["loop"], out)["summary"]
        self.assertEqual(summary["split"], "marker", out)
        self.assertGreaterEqual(calls, 20, out)
        # One marker stop per call; one partial sequence per iteration a sample fell in (an
        # iteration takes several sampling periods, but a loaded machine samples less often).
        self.assertLessEqual(abs(summary["markerStops"] - calls), 1, out)
        self.assertLessEqual(summary["iterations"], calls, out)
        self.assertGreaterEqual(summary["iterations"], 0.5 * calls, out)
        self.assertGreaterEqual(summary["samples"], 3 * summary["iterations"], out)

    # A live process the debugger attached to, not one it launched.
    def test_attached_process(self):
        d = self.debugger
        with harness.Background([harness.fixture("loop_funcm"), "30"]) as process:
            out, s = self.marked(
                [d.attach(process.pid),
                 ("funcm", "strobe loop --at func_M --iterations 10 --duration 20 --verify --json"),
                 d.kill])
        self.assert_verified(self.json_of(s["funcm"], out), out)


class LldbLoop(LoopScenarios, unittest.TestCase):
    debugger = harness.LldbSession


class GdbLoop(LoopScenarios, unittest.TestCase):
    debugger = harness.GdbSession


if __name__ == "__main__":
    unittest.main()
