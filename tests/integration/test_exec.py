"""A process that executes a new program while strobe captures it, in lldb-19 and in GDB.

examples/execs works in before_exec() for a while, allocating as it goes, then executes the
demo. Both are position-independent programs that the debuggers load at the same address: a
capture that went on past the exec (as GDB's did) filed the demo's functions under execs, and one
named after the exec named execs's samples after the demo's code. The capture and the heap
tracking end at the exec; the process stops there, and a new capture samples the new program."""
import re
import unittest

import harness

DEMO = harness.fixture("demo")
ARGS = ["1.5", DEMO, "1"]  # 1.5 s in before_exec, then the demo for 1 s
EXECUTED = f"the process executed a new program ({DEMO})"


def rows(report):
    """(module, function) of each row of `strobe profile --by function --json`."""
    return [(r["module"].rsplit("/", 1)[-1], r["function"]) for r in report["rows"]]


class Lldb(harness.LldbSession):
    stop_at_main = "breakpoint set --one-shot true --name main"
    # strobe's breakpoints are hidden from `breakpoint list` but are breakpoints of the target.
    count_breakpoints = "script print('breakpoints:', lldb.target.GetNumBreakpoints())"

    @staticmethod
    def strobe_breakpoints(section):
        return int(re.search(r"^breakpoints: (\d+)$", section, re.MULTILINE).group(1))

    @staticmethod
    def demo_exited(section):
        return "exited with status = 0" in section


class Gdb(harness.GdbSession):
    stop_at_main = "tbreak main"
    count_breakpoints = "maint info breakpoints"

    @staticmethod
    def strobe_breakpoints(section):
        # strobe's: internal breakpoints (negative numbers) and its catchpoints.
        return len(re.findall(r"^(-\d+\s+breakpoint|\d+\s+catchpoint)\s", section, re.MULTILINE))

    @staticmethod
    def demo_exited(section):
        return re.search(r"\[Inferior 1 \(process \d+\) exited normally\]", section) is not None


class ExecScenarios(harness.MarkedScenarios):
    debugger = None

    def setUp(self):
        harness.require_built(self.debugger.plugin)

    def test_a_capture_ends_at_the_exec_with_the_first_programs_names(self):
        d = self.debugger
        out, s = self.marked(
            [d.stop_at_main, "run", ("first", "strobe record --duration 20"),
             ("first profile", "strobe profile --by function --json"),
             ("between", d.count_breakpoints),
             ("second", "strobe record --duration 20"),
             ("second profile", "strobe profile --by function --json")],
            harness.fixture("execs"), ARGS)
        self.assertEqual(harness.ended(s["first"])[0], EXECUTED, out)
        first = rows(self.json_of(s["first profile"], out))
        self.assertIn(("execs", "before_exec"), first, out)
        self.assertFalse([r for r in first if r[0] == "demo" or "compute" in r[1]], out)
        self.assertEqual(d.strobe_breakpoints(s["between"]), 0, out)
        # The process stopped at the exec: the next capture samples the demo, named as the demo.
        self.assertEqual(harness.ended(s["second"])[0], "the process exited with status 0", out)
        second = rows(self.json_of(s["second profile"], out))
        self.assertIn(("demo", "compute_sixty"), second, out)
        self.assertFalse([r for r in second if r[0] == "execs"], out)

    def test_heap_tracking_ends_at_the_exec_and_leaves_no_hook_in_the_new_program(self):
        d = self.debugger
        out, s = self.marked(
            [d.stop_at_main, "run", "strobe mem start", ("exec", "continue"),
             ("after", d.count_breakpoints), ("status", "strobe mem status"),
             ("exit", "continue")],
            harness.fixture("execs"), ARGS)
        at_exec = s["exec"].split(f"strobe: {EXECUTED}; the heap as strobe saw it:", 1)
        self.assertEqual(len(at_exec), 2, out)
        # before_exec's block, still allocated at the exec
        self.assertRegex(at_exec[1], r"\n1000 B\s+1\s+malloc\s+execs\n\s+#1 execs!before_exec",
                         out)
        self.assertEqual(d.strobe_breakpoints(s["after"]), 0, out)
        self.assertIn("not tracking the heap", s["status"], out)
        # The demo runs to its end untouched: no hook of the first program was set again in it.
        self.assertRegex(s["exit"], r"demo: \d+ rounds in", out)
        self.assertTrue(d.demo_exited(s["exit"]), out)
        self.assertNotIn("Cannot insert breakpoint", out)


class LldbExec(ExecScenarios, unittest.TestCase):
    debugger = Lldb

    def test_an_exec_ends_the_capture_though_the_user_turned_stop_on_exec_off(self):
        setting = "settings show target.process.stop-on-exec"
        out, s = self.marked(["settings set target.process.stop-on-exec false",
                              Lldb.stop_at_main, "run", ("record", "strobe record --duration 20"),
                              ("after", setting)],
                             harness.fixture("execs"), ARGS)
        self.assertEqual(harness.ended(s["record"])[0], EXECUTED, out)
        self.assertIn("stop reason = exec", s["record"], out)
        self.assertIn("stop-on-exec (boolean) = false", s["after"], out)


class GdbExec(ExecScenarios, unittest.TestCase):
    debugger = Gdb

    def test_following_a_forks_child_is_no_exec(self):
        # GDB clears the parent's objfiles there too, and detaches the parent.
        out, s = self.marked(["set follow-fork-mode child", Gdb.stop_at_main, "run",
                              ("record", "strobe record --duration 20")],
                             harness.fixture("execs"), ARGS)
        self.assertEqual(harness.ended(s["record"])[0],
                         "the process stopped: GDB killed or detached it", out)


if __name__ == "__main__":
    unittest.main()
