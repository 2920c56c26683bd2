"""The LLDB front-end's Target port where it goes beyond sampling, through the commands that use it:
`strobe step` steps the thread the user selected and only that thread, its locations resolve where
LLDB's own breakpoints would stop, and a stop strobe did not cause ends the trace and stays the
user's. Heap tracking's breakpoints stay out of the user's way."""
import os
import re
import tempfile
import unittest

import harness
from test_gdb_port import FUNC_B, START_THREAD, START_THREAD_SYMBOL, annotated

STEPPED = re.compile(
    r"strobe: stepped (\d+) instructions? of thread (\d+) in .*?; (.+?); 'strobe dump'")
THREAD = re.compile(r"^\s*\*?\s*thread #(\d+): tid = (\d+), (0x[0-9a-f]+) ", re.MULTILINE)
BREAKPOINT_AT = re.compile(r"Breakpoint \d+: where = .*?, address = (0x[0-9a-f]+)")
# In the threads fixture's main loop, after a short-lived thread was joined: main is running.
MAIN_RUNNING = harness.source_line("threads.c", "usleep(20000);")
# What a step trace says once on an lldb-server without strobe's library.
NO_LIBRARY = ("lldb-server runs without strobe's library, so each instruction is one of LLDB's "
              "own steps (about 1 ms). One that LLDB starts after 'plugin load' has the library; "
              f"start yours through {harness.LLDB_SERVER_LAUNCHER} in lldb-server's place")


def require_lldb_plugin():
    harness.require_built(harness.LLDB_PLUGIN)


def stepped(test, out):
    """(instructions, thread, why it ended) of every `strobe step` in the output."""
    found = [(int(n), int(tid), why) for n, tid, why in STEPPED.findall(out)]
    test.assertTrue(found, out)
    return found


def thread_lists(out):
    """{thread index: (tid, pc)} of each `thread list` in the output, in order."""
    lists = []
    for block in out.split("(lldb) thread list")[1:]:
        block = block.split("(lldb) ")[0]
        lists.append({int(i): (int(tid), int(pc, 16)) for i, tid, pc in THREAD.findall(block)})
    return lists


class StepThroughLldb(unittest.TestCase):
    def setUp(self):
        require_lldb_plugin()

    def test_step_counts_instructions_of_the_selected_thread(self):
        rc, out = harness.lldb(["b calls", "run", "thread list", "strobe step --count 300 --quiet",
                                "thread list"],
                               harness.fixture("calls"), ["1000", "4", "1"])
        self.assertEqual(rc, 0, out)
        [(count, tid, why)] = stepped(self, out)
        before, after = thread_lists(out)
        self.assertEqual(count, 300, out)
        self.assertEqual(why, "the count was reached", out)
        self.assertEqual(tid, before[1][0], out)
        self.assertNotEqual(after[1][1], before[1][1], "the thread moved: " + out)

    def test_step_holds_every_other_thread(self):
        # Thread 3 is the first busy worker: it spins, so each of its steps is one instruction of
        # plain code; threads 1 (creating workers) and 2 (parked in read) must not move.
        rc, out = harness.lldb(["b busy_worker", "run", "breakpoint delete 1", "thread list",
                                "thread select 3", "strobe step --count 200 --quiet",
                                "thread list"],
                               harness.fixture("threads"), ["2", "3"])
        self.assertEqual(rc, 0, out)
        before, after = thread_lists(out)
        [(count, tid, _)] = stepped(self, out)
        self.assertEqual(count, 200, out)
        self.assertEqual(tid, before[3][0], "the user's selected thread is stepped: " + out)
        for index in (1, 2):
            self.assertEqual(after[index], before[index], f"thread #{index} moved:\n{out}")

    def test_step_follows_the_users_thread_selection(self):
        # The stop selects main, the user selects thread 3, the first busy worker. (Not main nor
        # thread 2: a thread blocked in a system call, as in pthread_join or read, cannot finish
        # its next instruction while the others are held.)
        rc, out = harness.lldb(["b busy_worker", "run", "breakpoint delete 1",
                                f"b {MAIN_RUNNING}", "continue", "thread list",
                                "thread select 3", "strobe step --count 1 --quiet"],
                               harness.fixture("threads"), ["2", "3"])
        self.assertEqual(rc, 0, out)
        [before] = thread_lists(out)
        self.assertRegex(out, r"\* thread #1: tid = \d+, .* stop reason = breakpoint 2\.1", out)
        [(_, tid, _)] = stepped(self, out)
        self.assertEqual(tid, before[3][0], out)
        self.assertNotEqual(before[1][0], before[3][0], out)

    def test_until_stops_where_lldb_breakpoints_resolve(self):
        # Each location is resolved by strobe first, then by LLDB's `breakpoint set` as the
        # independent answer: a plain function, a mangled C++ symbol that only libstdc++ defines
        # (the program itself has just a PLT stub for it), and a source line inside leaf().
        rc, out = harness.lldb(["b leaf", "run", "breakpoint delete 1",
                                "strobe step --until _Znwm --quiet", "b _Znwm",
                                "breakpoint delete 2", "strobe step --until calls.cpp:14 --quiet",
                                "b calls.cpp:14", "breakpoint delete 3",
                                "strobe step --until leaf --quiet", "b leaf"],
                               harness.fixture("calls"), ["3", "4", "1"])
        self.assertEqual(rc, 0, out)
        reached = [why for _, _, why in stepped(self, out)]
        expected = BREAKPOINT_AT.findall(out.split("breakpoint delete 1", 1)[1])
        self.assertEqual(len(reached), 3, out)
        self.assertEqual(len(expected), 3, out)
        for why, address in zip(reached, expected):
            self.assertEqual(why, f"the pc reached {int(address, 16):#x}", out)
        self.assertIn("libstdc++", out.split("b _Znwm", 1)[1].splitlines()[1], out)

    def test_until_takes_an_address(self):
        rc, out = harness.lldb(["b leaf", "run"], harness.fixture("calls"), ["3", "4", "1"])
        self.assertEqual(rc, 0, out)
        m = re.search(r"stop reason = breakpoint 1\.1\n\s+frame #0: (0x[0-9a-f]+)", out)
        self.assertIsNotNone(m, out)
        leaf = int(m.group(1), 16)
        rc, out = harness.lldb(["b leaf", "run", "breakpoint delete 1", "strobe step --count 1",
                                f"strobe step --until *{leaf:#x} --quiet"],
                               harness.fixture("calls"), ["3", "4", "1"])
        self.assertEqual(rc, 0, out)
        self.assertEqual(stepped(self, out)[-1][2], f"the pc reached {leaf:#x}", out)

    def steps_requested(self, start):
        """2000 steps of steploop_chase's loop, then the program run to its end, in an LLDB
        whose lldb-server `start(commands, program, args, log)` starts (`run` in `commands` runs
        the program, or continues it) and logs packets to `log`: how many step requests
        lldb-server received, and whether strobe said the server has no library of its own.
        After the run LLDB sees the thread where the trace ended, and the program runs on to its
        normal end."""
        with tempfile.TemporaryDirectory() as scratch:
            log = os.path.join(scratch, "lldb-server.log")
            rc, out = start(["b step_work", "run", "strobe step --count 2000 --quiet",
                             "strobe dump", "p/x $pc", "breakpoint delete -f", "continue"],
                            harness.fixture("steploop_chase"), ["3000"], log)
            with open(log, "rb") as f:
                requests = f.read().count(b"read packet: $vCont;s")
        self.assertEqual(rc, 0, out)
        [(count, _, why)] = stepped(self, out)
        self.assertEqual((count, why), (2000, "the count was reached"), out)
        last_rip = re.findall(r"^\s+2000  0x[0-9a-f]+ .* rip=(0x[0-9a-f]+)", out, re.M)
        pc = re.findall(r"^\(unsigned long\) (0x[0-9a-f]+)$", out, re.M)
        self.assertEqual(len(last_rip), 1, out)
        self.assertEqual([int(v, 16) for v in pc], [int(last_rip[0], 16)], out)
        self.assertRegex(out, r"Process \d+ exited with status = 0", out)
        return requests, NO_LIBRARY in out

    def test_steps_stay_inside_lldb_server(self):
        # strobe's library inside lldb-server steps the thread again at each of the plugin's
        # words, so lldb-server receives one step request per run of steps, where LLDB's own step
        # costs one each.
        def launched(env):
            def start(commands, program, args, log):
                return harness.lldb(commands, program, args,
                                    env={"LLDB_DEBUGSERVER_LOG_FILE": log,
                                         "LLDB_SERVER_LOG_CHANNELS": "gdb-remote packets", **env})
            return start

        requests, told = self.steps_requested(launched({}))
        self.assertLessEqual(requests, 5)
        self.assertFalse(told)
        # Without the library every step is a request: the count above can tell the two apart.
        # The user who turned the library off is not told about it.
        requests, told = self.steps_requested(launched({"STROBE_SERVER_TAP": "0"}))
        self.assertGreaterEqual(requests, 2000)
        self.assertFalse(told)

    def test_an_lldb_server_started_through_strobes_launcher_has_its_library(self):
        # An lldb-server the user starts for `gdb-remote` has no library of strobe's, unless
        # started through strobe's launcher in its place: then steps stay inside it as above.
        # A trace on a plain one says where the launcher is.
        def remote(server):
            def start(commands, program, args, log):
                port = harness.free_port()
                with harness.Background([server, "gdbserver", "--log-file", log,
                                         "--log-channels", "gdb-remote packets",
                                         f"127.0.0.1:{port}", "--", program, *args]):
                    return harness.lldb([f"target create {program}",
                                         f"gdb-remote 127.0.0.1:{port}",
                                         *("continue" if c == "run" else c for c in commands)])
            return start

        requests, told = self.steps_requested(remote(harness.LLDB_SERVER_LAUNCHER))
        self.assertLessEqual(requests, 5)
        self.assertFalse(told)
        requests, told = self.steps_requested(remote("/usr/lib/llvm-19/bin/lldb-server"))
        self.assertGreaterEqual(requests, 2000)
        self.assertTrue(told)

    def test_a_user_breakpoint_ends_the_trace_and_stays_the_users(self):
        rc, out = harness.lldb(["b calls", "run", "b leaf", "strobe step --count 5000 --quiet",
                                "process status", "breakpoint delete -f", "continue"],
                               harness.fixture("calls"), ["3", "4", "1"])
        self.assertEqual(rc, 0, out)
        [(count, _, why)] = stepped(self, out)
        self.assertLess(count, 5000, out)
        self.assertEqual(why, "breakpoint 2.1", out)
        status = out.split("(lldb) process status", 1)[1]
        self.assertRegex(status, r"stop reason = breakpoint 2\.1\n\s+frame #0: 0x[0-9a-f]+ "
                                 r"calls`(::)?leaf", out)
        self.assertIn("calls: 3 leaf calls", out)
        self.assertRegex(out, r"Process \d+ exited with status = 0", out)

    def test_the_process_exiting_ends_the_trace(self):
        rc, out = harness.lldb(["b _exit", "run", "breakpoint delete 1",
                                "strobe step --count 1000 --quiet", "process status"],
                               harness.fixture("calls"), ["3", "4", "1"])
        self.assertEqual(rc, 0, out)
        [(count, _, why)] = stepped(self, out)
        self.assertLess(count, 1000, out)
        self.assertEqual(why, "the process exited with status 0", out)
        self.assertRegex(out.split("(lldb) process status", 1)[1],
                         r"Process \d+ exited with status = 0", out)


class HiddenBreakpointsThroughLldb(unittest.TestCase):
    """Heap tracking places strobe's own breakpoints on the allocator."""

    def setUp(self):
        require_lldb_plugin()

    def lldb(self, commands, calls=("300", "4", "1")):
        rc, out = harness.lldb(commands, harness.fixture("calls"), list(calls))
        if "'mem start' is not implemented" in out:
            self.skipTest("strobe mem start is not implemented yet")
        return rc, out

    def test_the_users_breakpoint_commands_neither_see_nor_remove_them(self):
        rc, out = self.lldb(["b calls", "run", "strobe mem start", "breakpoint list",
                             "breakpoint delete -f", "breakpoint disable",
                             "breakpoint name list", "continue"])
        self.assertEqual(rc, 0, out)
        listing = out.split("(lldb) breakpoint list", 1)[1].split("(lldb)")[0]
        self.assertEqual(re.findall(r"^(\d+): ", listing, re.MULTILINE), ["1"],
                         "only the user's breakpoint is listed: " + out)
        names = out.split("(lldb) breakpoint name list", 1)[1].split("(lldb)")[0]
        self.assertRegex(names, r"\n\d+: (name|address) = ", "they survive delete/disable: " + out)
        self.assertIn("calls: 300 leaf calls", out)
        self.assertRegex(out, r"Process \d+ exited with status = 0", out)
        self.assertNotIn("stop reason = breakpoint", out.split("(lldb) continue", 1)[1], out)

    def test_a_user_breakpoint_on_a_hooked_function_still_stops(self):
        rc, out = self.lldb(["b calls", "run", "strobe mem start", "b _Znwm", "continue",
                             "bt 3"])
        self.assertEqual(rc, 0, out)
        users = re.search(r"Breakpoint (\d+): where = libstdc\+\+", out)
        self.assertIsNotNone(users, out)
        after = out.split("(lldb) continue", 1)[1]
        self.assertRegex(after, rf"stop reason = breakpoint .*\b{users.group(1)}\.1\b", out)
        self.assertRegex(after, r"frame #1: 0x[0-9a-f]+ calls`(::)?leaf", out)

    def test_a_step_trace_through_hooked_functions_counts_their_calls(self):
        # A run of steps inside lldb-server ends at a hook's int3, and LLDB's step that reports
        # it runs the hook's handler on a thread of its own while `strobe step` waits for it:
        # the handler must not wait for the command in turn (it did: stepping hung).
        rc, out = harness.lldb(["b main", "run", "strobe mem start",
                                "strobe step --count 20000 --quiet", "continue",
                                "strobe mem status"],
                               harness.fixture("memchurn"), ["200", "4"])
        self.assertEqual(rc, 0, out)
        [(count, _, why)] = stepped(self, out)
        self.assertEqual((count, why), (20000, "the count was reached"), out)
        self.assertRegex(out, r"Process \d+ exited with status = 0", out)
        # 200 allocations and their 200 frees, those made while stepping included.
        self.assertIn("holds 400 heap events", out)

    def test_stop_removes_them(self):
        rc, out = self.lldb(["b calls", "run", "strobe mem start", "strobe mem stop",
                             "breakpoint name list"])
        self.assertEqual(rc, 0, out)
        self.assertIn("No breakpoints using this name", out.rsplit("breakpoint name list", 1)[1])


class DataAddressThroughLldb(unittest.TestCase):
    """Target::dataAddress, through `strobe loop --split expr:VARIABLE`: the variable read at each
    sample must be the program's counter, which differs from one sample to the next."""
    ITERATIONS = re.compile(r"iterations: (\d+) partial sequences \(\d+ distinct\) from (\d+) "
                            r"samples in the loop")

    def setUp(self):
        require_lldb_plugin()

    def test_a_global_of_the_launched_executable_splits_the_iterations(self):
        rc, out = harness.lldb(["b func_M", "run", "breakpoint delete 1",
                                # enough samples however slow LLDB's stops are (CI got 33 in
                                # 1 s): an expr split counts each sample as an iteration
                                "strobe loop --at func_M --split expr:iteration --iterations 150 "
                                "--duration 25 --overhead 100",
                                "strobe loop --at func_M --split expr:no_such_variable_anywhere"],
                               harness.fixture("loop_funcm"), ["30"])
        self.assertIn("split: expr ('iteration' read at each sample)", out)
        found = self.ITERATIONS.search(out)
        self.assertIsNotNone(found, out)
        sequences, samples = int(found.group(1)), int(found.group(2))
        self.assertGreater(samples, 100, out)
        # An unreadable address would give no iteration, a wrong readable one a single iteration.
        self.assertGreater(sequences, samples / 2, out)
        self.assertIn("error: 'no_such_variable_anywhere' is neither a register nor a global or "
                      "static variable the debugger knows", out)


class SymbolsThroughLldb(unittest.TestCase):
    """Code without debug information, named and sized as the GDB front-end does (test_gdb_port
    SymbolTest): a capture must not depend on the debugger that took it."""

    def setUp(self):
        require_lldb_plugin()

    def test_an_asm_function_is_named_and_sized_by_its_elf_symbol(self):
        rc, out = harness.lldb(["b func_M", "run", "breakpoint delete -f",
                                "strobe record --duration 0.5", "strobe profile --by function",
                                "strobe annotate func_B --asm", "kill"],
                               harness.fixture("loop_funcm"), ["30"])
        self.assertEqual(rc, 0, out)
        self.assertIn("func_B", harness.function_percentages(out.split("strobe annotate:")[0]))
        start, rows = annotated(self, out, "func_B")
        self.assertEqual([instruction for _, instruction in rows], FUNC_B, out)
        self.assertEqual(rows[0][0], start, out)
        self.assertEqual(rows[-1][0] + 1 - start, 32, out)  # the last instruction: ret, 1 byte

    def test_a_cxx_function_and_its_plt_entry_are_named_as_gdb_shows_them(self):
        # LLDB's own names would be "...std::default_delete<std::thread::_State>>, void (*)())"
        # for both, the .plt entry being LLDB's trampoline symbol.
        rc, out = harness.lldb(["b main", "run",
                                f"strobe step --until {START_THREAD_SYMBOL} --quiet",
                                "strobe dump", "strobe step --count 1 --quiet", "strobe dump"],
                               harness.fixture("calls"), ["3", "4", "2"])
        self.assertEqual(rc, 0, out)
        _, to_the_function, in_the_function = out.split("strobe: stepped ")
        self.assertRegex(to_the_function, rf" <{re.escape(START_THREAD)}@plt> +jmp ", out)
        self.assertIn(f" <{START_THREAD}>  ", in_the_function, out)


if __name__ == "__main__":
    unittest.main()
