"""`strobe step --memory` in both debuggers: the Tenet export of a 2000-instruction trace, read back
by a parser written here, equals what the debugger's own stepi shows at every step — registers
before each instruction, the memory it read before and wrote after. The extended registers (SSE,
AVX, x87) of a trace through vector and long double code equal the debugger's own at every step,
by each way strobe reads them. And stepping a thread parked in a system call says so before it
waits."""
import json
import os
import re
import tempfile
import unittest

import harness
import step_reference

STEPS = 2000
# Through `mix` (AVX) into `series` (x87) of the vector fixture.
VECTOR_STEPS = 300
# eflags bits the stepping mechanism itself sets (TF, RF): not the program's, should Tenet show it.
STEP_FLAGS = 0x100 | 0x10000
HERE = os.path.dirname(os.path.abspath(__file__))


TENET_LINE = re.compile(r"[\w]+=[0-9a-fx:]+(,[\w]+=[0-9a-fx:]+)*")


def parse_tenet(text, pc):
    """Tenet lines -> [(registers before the instruction, [(kind, address, hex)])]; `pc`: the
    program counter's name, which every line has."""
    state, steps = {}, []
    for line in text.splitlines():
        line = line.strip()
        if f"{pc}=" not in line or not re.fullmatch(TENET_LINE, line):
            continue
        memory = []
        for item in line.split(","):
            name, value = item.split("=")
            if name in ("mr", "mw"):
                address, data = value.split(":")
                memory.append((name[1], int(address, 16), data))
            else:
                state[name] = int(value, 16)
        steps.append((dict(state), memory))
    return steps


def trace_and_reference(test, strobe_run, reference_run, steps, accesses_of):
    """Runs strobe_run(path) (`strobe step` of `steps` instructions, then `strobe dump --output
    path`; LLDB cannot redirect a command into a file), then reference_run(accesses, states)
    (step_reference in a second debugger on the same program) on accesses_of(the file's text).
    Returns the file's text, strobe_run's output and the reference's states."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.txt")
        rc, out = strobe_run(path)
        test.assertEqual(rc, 0, out)
        test.assertRegex(out, rf"strobe: stepped {steps} instructions of thread \d+")
        with open(path) as f:
            text = f.read()
        test.assertIn(f"strobe: wrote {text.count(chr(10))} lines to {path}", out)
        accesses = os.path.join(tmp, "accesses.json")
        with open(accesses, "w") as f:
            json.dump(accesses_of(text), f)
        states = os.path.join(tmp, "states.json")
        rc, ref_out = reference_run(accesses, states)
        test.assertTrue(os.path.exists(states), ref_out)
        with open(states) as f:
            reference = json.load(f)
    test.assertEqual(len(reference), steps)
    return text, out, reference


def check_tenet_trace(test, strobe_run, reference_run, steps_wanted, registers, step_flags=0):
    """Asserts that every register and memory value of the Tenet export (`strobe step --memory`
    of steps_wanted instructions, `strobe dump --tenet`; see trace_and_reference) equals the
    debugger's own. `registers`: some the first line must show, the program counter last.
    `step_flags`: bits of the flags register the stepping mechanism sets."""
    pc = registers[-1]

    def accesses_of(tenet):
        steps = parse_tenet(tenet, pc)
        test.assertGreaterEqual(len(steps), steps_wanted, tenet[-3000:])
        test.assertTrue(any(m for _, m in steps[:steps_wanted]),
                        "walk loads and stores: memory must show")
        return [[(kind, address, len(data) // 2) for kind, address, data in memory]
                for _, memory in steps[:steps_wanted]]

    tenet, out, reference = trace_and_reference(test, strobe_run, reference_run, steps_wanted,
                                                accesses_of)
    test.assertNotIn(f"{pc}=", out, "the trace goes to the file, not the console")
    steps = parse_tenet(tenet, pc)[:steps_wanted]
    test.assertGreaterEqual(set(steps[0][0]), set(registers))
    for i, ((regs, memory), truth) in enumerate(zip(steps, reference)):
        for name, value in regs.items():  # Tenet's register set: the GPRs and the pc
            expected = truth["regs"][name]
            if name in ("eflags", "cpsr"):
                expected &= ~step_flags
            test.assertEqual(value, expected,
                             f"step {i}: {name} differs ({pc} {truth['regs'][pc]:#x})")
        reads = [data for kind, _, data in memory if kind == "r"]
        writes = [data for kind, _, data in memory if kind == "w"]
        test.assertEqual(reads + writes, truth["memory"], f"step {i}: memory differs")


DUMP_REGISTER = re.compile(r" (\w+)=0x([0-9a-f]+)")


def dump_states(text):
    """`strobe dump` of a step trace -> every register's value after each record, by name."""
    state, states = {}, []
    for line in text.splitlines():
        if re.match(r"\s+\d+  ", line):
            state.update({name: int(value, 16) for name, value in DUMP_REGISTER.findall(line)})
            states.append(dict(state))
    return states


def check_extended_trace(test, strobe_run, reference_run, steps, isa, must_change):
    """Asserts that the extended registers of a step trace of `steps` instructions, as `strobe
    dump` prints them (see trace_and_reference), equal the debugger's own at every step, and that
    those of `must_change` changed on the way."""
    dump, _, reference = trace_and_reference(test, strobe_run, reference_run, steps,
                                             lambda _: [[] for _ in range(steps)])
    states = dump_states(dump)
    reference = [step["regs"] for step in reference]
    test.assertEqual(len(states), steps + 1)
    pc = "pc" if isa == "aarch64" else "rip"
    for i, (state, truth) in enumerate(zip(states, reference)):
        for name in step_reference.EXTENDED[isa]:
            test.assertEqual(state.get(name), truth[name],
                             f"step {i}: {name} differs ({pc} {truth[pc]:#x})")
    changed = {name for name in step_reference.EXTENDED[isa]
               if len({step[name] for step in reference}) > 1}
    test.assertGreaterEqual(changed, set(must_change))


class StepTraceTest:
    """Mixed into one test class per debugger."""

    def strobe_run(self, tenet_file):
        raise NotImplementedError

    def reference_run(self, accesses_path, states_path):
        raise NotImplementedError

    def dumped(self, commands, program, args, run=None):
        """The output of `commands` on `program`, and the lines `strobe dump` then writes (LLDB
        cannot redirect a command into a file). `run`: how to run them, if not self.commands."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.txt")
            rc, out = (run or self.commands)(commands + [f"strobe dump --output {path}"], program,
                                             args)
            self.assertEqual(rc, 0, out)
            with open(path) as f:
                return out, f.read().splitlines()

    def traced_to_unloaded(self, commands):
        """dumped() of `commands`, then a trace of the unload fixture to `unloaded`, after its
        library's dlclose."""
        return self.dumped(commands + ["strobe step --until unloaded --quiet"],
                           harness.fixture("unload"), [harness.fixture("libunload_plugin.so")])

    def test_a_thread_inside_a_system_call_is_named_before_the_wait(self):
        d = self.debugger
        with harness.Background(["sleep", "4"]) as process:
            rc, out = self.commands([d.attach(process.pid), "strobe step --count 3 --quiet"])
        self.assertEqual(rc, 0, out)
        note = re.search(r"strobe: thread \d+ is inside system call (\d+); the first step waits "
                         r"until it returns \(Ctrl-C ends stepping\)", out)
        self.assertIsNotNone(note, out)
        self.assertIn(int(note.group(1)), (35, 230), "nanosleep or clock_nanosleep")
        self.assertRegex(out[note.end():], r"strobe: stepped 3 instructions of thread \d+")

    def test_the_thread_stays_where_a_trace_until_its_start_ends(self):
        # From body's first instruction back to it, twice. LLDB's step that carries a run of steps
        # inside lldb-server had taken one more, unrecorded, where the run ended at the pc it began
        # at: the thread was left in mix, and the second trace began there. (From the second
        # iteration: the first reads the clock, whose vDSO loop a single-stepped thread may never
        # leave on a VM whose clock ticks faster than the loop steps.)
        rc, out = self.commands(["b body", "run", "continue", self.delete_breakpoints,
                                 "strobe step --until body --quiet", self.read_pc,
                                 "strobe step --until body --quiet", self.read_pc],
                                harness.fixture("loop_helper"), args=("120", "0"))
        self.assertEqual(rc, 0, out)
        reached = [int(pc, 16) for pc in re.findall(r"the pc reached (0x[0-9a-f]+)", out)]
        after = [int(pc, 16) for pc in re.findall(self.pc_pattern, out)]
        self.assertEqual(len(reached), 2, out)
        self.assertEqual(after, reached, out)
        self.assertEqual(reached[0], reached[1], out)

    def test_the_thread_stays_where_a_count_back_to_the_start_ends(self):
        # One iteration of body's loop, then two, counted from body: each trace ends at body, the
        # second after passing it once. A run of steps inside lldb-server passes its start freely
        # mid-trace, and ends before a last step that may land there.
        start = ["b body", "run", "continue", self.delete_breakpoints,
                 "strobe step --until body --quiet"]  # from the second iteration, as above
        rc, out = self.commands(start + ["strobe step --until body --quiet"],
                                harness.fixture("loop_helper"), args=("120", "0"))
        self.assertEqual(rc, 0, out)
        iteration = [int(n) for n in re.findall(r"stepped (\d+) instructions", out)][-1]
        rc, out = self.commands(start + [f"strobe step --count {iteration} --quiet", self.read_pc,
                                         f"strobe step --count {2 * iteration} --quiet",
                                         self.read_pc],
                                harness.fixture("loop_helper"), args=("120", "0"))
        self.assertEqual(rc, 0, out)
        body = int(re.search(r"the pc reached (0x[0-9a-f]+)", out).group(1), 16)
        self.assertEqual([int(pc, 16) for pc in re.findall(self.pc_pattern, out)], [body, body],
                         out)

    def test_a_watchpoint_ends_the_trace_with_the_store_that_fired_it(self):
        for watch, hardware in self.watch_commands:
            with self.subTest(watch=watch):
                if hardware and not harness.hardware_watchpoints_fire():
                    self.skipTest("hardware watchpoints do not fire on this machine")
                rc, out = self.commands(
                    ["b body", "run", "p/x (unsigned long)&iteration", *watch,
                     "strobe step --count 100 --memory", "p/x $pc"],
                    harness.fixture("loop_helper"), ["120", "0"])
                self.assertEqual(rc, 0, out)
                values = re.findall(r"^(?:\$\d+ = |\(unsigned long\) )(0x[0-9a-f]+)$", out, re.M)
                self.assertEqual(len(values), 2, out)
                iteration, pc_after = (int(v, 16) for v in values)
                ended = re.search(r"strobe: stepped (\d+) instructions of thread \d+ in .*; "
                                  r"watchpoint \d+;", out)
                self.assertIsNotNone(ended, out)
                rows = re.findall(r"^\s+(\d+)  0x[0-9a-f]+ .* rip=(0x[0-9a-f]+)(.*)$", out, re.M)
                self.assertTrue(rows, out)
                last, rip, memory = rows[-1]
                # The store ran before the watchpoint stopped the thread: it is the trace's last
                # instruction, with the value it wrote, and the thread is where it left off.
                self.assertEqual(int(last), int(ended.group(1)), out)
                self.assertEqual(int(rip, 16), pc_after, out)
                self.assertIn(f"write [{iteration:#x}]:8=0x1", memory, out)
                self.assertEqual(out.count(f"[{iteration:#x}]:8=0x1"), 1, out)
                # The debugger's own report of the trigger, old value included.
                self.assertRegex(out, self.watchpoint_values)

    def test_a_breakpoint_the_debugger_would_not_stop_at_is_stepped_over(self):
        # At step_work's loop head (+0x1b) rdx counts 0, 3, 6: a condition true at the third
        # arrival, or an ignore count of two, stops there. The trace steps through the first two
        # (GDB had ended at the first, LLDB had run free to the third) and ends at the third.
        for breakpoint in self.loop_head_breakpoints:
            with self.subTest(breakpoint=breakpoint):
                self.check_stepped_over(*self.commands(
                    ["b step_work", "run", *breakpoint, "strobe step --count 1000",
                     "p/x (unsigned long)$rdx"], harness.fixture("steploop_int"), ["100"]))

    def check_stepped_over(self, rc, out):
        """Asserts that a trace with one of loop_head_breakpoints set ended at the loop head's third
        arrival, through the first two."""
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in .*; "
                              r"breakpoint 2\b")
        rdx = re.findall(r"^(?:\$\d+ = |\(unsigned long\) )(0x[0-9a-f]+)$", out, re.M)
        self.assertEqual([int(v, 16) for v in rdx], [6], out)
        self.assertEqual(len(re.findall(r"^\s+\d+  0x[0-9a-f]+ <step_work\+0x1b>", out, re.M)),
                         2, out)

    def test_a_one_shot_breakpoint_ends_the_trace_at_its_first_hit(self):
        # LLDB removes a one-shot breakpoint with its hit, and then no longer names it among the
        # stop's owners: the trace had taken the stop for strobe's own and stepped on, the
        # breakpoint used up. It ends at the loop head's first arrival (rdx 0), as GDB's does.
        self.check_one_shot(*self.commands(["b step_work", "run", self.one_shot_loop_head,
                                            "strobe step --count 1000", "p/x (unsigned long)$rdx",
                                            self.list_breakpoints],
                                           harness.fixture("steploop_int"), ["100"]))

    def check_one_shot(self, rc, out):
        """Asserts what test_a_one_shot_breakpoint_ends_the_trace_at_its_first_hit asks."""
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in .*; "
                              r"breakpoint 2\b")
        rdx = list(re.finditer(r"^(?:\$\d+ = |\(unsigned long\) )(0x[0-9a-f]+)$", out, re.M))
        self.assertEqual([int(v.group(1), 16) for v in rdx], [0], out)
        self.assertEqual(len(re.findall(r"^\s+\d+  0x[0-9a-f]+ <step_work\+0x1b>", out, re.M)),
                         0, out)
        listed = out[rdx[0].end():]
        self.assertRegex(listed, r"(?m)^1[:\s]", out)
        self.assertNotRegex(listed, r"(?m)^2[:\s]", "used up, and gone")

    def test_an_exec_ends_the_trace_before_the_new_program_runs(self):
        # GDB had followed the exec inside its stepi and run the new program's start unstepped,
        # to the next breakpoint: one record held all of it.
        program = harness.fixture("steploop_int")
        out, lines = self.dumped(["b before_exec", "run", "strobe step --count 100000 --quiet"],
                                 harness.fixture("execs"), ["0", program, "3"])
        ended = re.search(r"strobe: stepped (\d+) instructions of thread \d+ in [^;]*; "
                          r"the process executed a new program \(([^)]*)\);", out)
        self.assertIsNotNone(ended, out)
        self.assertEqual(os.path.realpath(ended.group(2)), os.path.realpath(program))
        self.assertRegex(lines[0], rf"step trace of thread \d+: {int(ended.group(1)) + 1} records")
        # Named after the program that ran them, not the one that replaced it (same addresses).
        rows = [line for line in lines if re.match(r"\s+\d+  0x", line)]
        self.assertRegex(rows[0], r"^\s+1  0x[0-9a-f]+ <before_exec>  ")
        self.assertRegex(rows[-1], r"<[_\w]*execve[^>]*>  ")

    def test_a_library_unloaded_during_the_trace_keeps_its_names(self):
        # The trace runs plugin_work, then dlclose, which unmaps its library; the debugger then
        # forgets the library's names. They had been looked up at the trace's end only.
        out, lines = self.traced_to_unloaded(["b before_call", "run", "finish"])
        self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in [^;]*; "
                              r"the pc reached 0x[0-9a-f]+;")
        rows = [re.match(r"\s+\d+  (0x[0-9a-f]+) (<[^>]*>)?", line) for line in lines]
        rows = [(int(row.group(1), 16), row.group(2)) for row in rows if row]
        calls = [i for i, line in enumerate(lines) if re.search(r"> +call rbp\b", line)]
        self.assertEqual(len(calls), 1, "\n".join(lines[:20]))
        after = re.match(r"\s+\d+  (0x[0-9a-f]+) <plugin_work>  ", lines[calls[0] + 1])
        self.assertIsNotNone(after, lines[calls[0] + 1])
        entry = int(after.group(1), 16)
        # The library's code: plugin_work, and its _fini, which dlclose runs.
        library = [name for pc, name in rows if entry <= pc < entry + 0x100]
        self.assertTrue(all(library), library)
        work = [name for name in library if name.startswith("<plugin_work")]
        self.assertGreaterEqual(len(work), 30, "ten iterations of three instructions or more")

    def test_the_dynamic_loaders_breakpoint_is_stepped_like_any_instruction(self):
        # dlclose calls _dl_debug_state, where the debugger has its own breakpoint, to tell it
        # that the library goes, then that it has gone. LLDB had taken a step onto it for that
        # breakpoint's hit, run the hit's callback, and gone on through the return: a gap of two
        # instructions each time, reported as a signal's delivery.
        self.assert_loader_calls_stepped(*self.traced_to_unloaded(["b before_call", "run",
                                                                     "finish"]))

    def assert_loader_calls_stepped(self, out, lines):
        """That the dlclose trace (`out`, its dump's `lines`) has no gap, and each of dlclose's
        two calls of _dl_debug_state is followed by its `ret`, then by the caller."""
        self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in [^;(]*"
                              r"\(\d+ us each\); the pc reached 0x[0-9a-f]+;")
        self.assertFalse([line for line in lines if "(after a gap)" in line])
        calls = [i for i, line in enumerate(lines) if re.search(r"  call 0x[0-9a-f]+\s", line)
                 and i + 1 < len(lines) and re.search(r"<[_\w]*_dl_debug_state>  ", lines[i + 1])]
        self.assertEqual(len(calls), 2, "before and after the unmapping")
        for i in calls:
            self.assertRegex(lines[i + 1], r"  ret\b")
            called = int(re.search(r"\s(0x[0-9a-f]+) <", lines[i]).group(1), 16)
            returned = int(re.search(r"\s(0x[0-9a-f]+) <", lines[i + 2]).group(1), 16)
            self.assertEqual(returned - called, 5, lines[i:i + 3])  # the call's length

    def test_a_breakpoint_in_a_library_loaded_during_the_trace_ends_it(self):
        # The user's breakpoint on plugin_work waits for dlopen, mid-trace, to load its library.
        # LLDB had stepped on through its hit: the new location had no hidden owner, and the stop
        # there was taken for the step's.
        out, lines = self.traced_to_unloaded(self.pending_breakpoints + [
            "b plugin_work", "b before_load", "run", "finish"])
        self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in [^;]*; "
                              r"breakpoint 1(\.1)?;")
        rows = [line for line in lines if re.match(r"\s+\d+  0x", line)]
        self.assertRegex(rows[-1], r"<main\+0x[0-9a-f]+> +call rbp\b", "the call into it last")
        self.assertGreater(len(rows), 1000, "dlopen's instructions before it")

    def test_a_signal_handler_is_stepped_after_a_gap(self):
        # SIGALRM every 5 ms, which both debuggers pass without stopping. GDB had run each
        # handler inside its stepi, unrecorded; LLDB had recorded the interrupted instruction as
        # if it ran into the handler. The delivery is a record of its own, after a gap, and the
        # handler's instructions follow it, from its first: LLDB's step into a handler had also
        # run that one. Each system call of the handler's return had stalled an LLDB trace 2 s.
        out, lines = self.dumped(["b spin", "run", self.delete_breakpoints,
                                  "strobe step --count 3000 --quiet"],
                                 harness.fixture("ticks"), ["100000000"])
        stepped, each, moved = self.check_handlers_after_gaps(out, lines)
        self.assertLess(each, 3000, out)  # the stalls made it 5500
        # Most of the trace is the program's own loop: a handler is six instructions. LLDB had
        # stepped each system call of a handler's return with a step of its own, and a handler
        # cycle outlasted the timer's period: the program ran nothing but handlers.
        self.assertLess(moved * 12, stepped, out)

    def check_handlers_after_gaps(self, out, lines):
        """Asserts that a 3000-instruction trace of the ticks fixture (`strobe step` output,
        `strobe dump` lines) went into handlers, each delivery a gap followed by the handler's
        first instruction. Returns (instructions, us each, gaps)."""
        ended = re.search(r"strobe: stepped (\d+) instructions of thread \d+ in [^;(]*\((\d+) us "
                          r"each\), moved (\d+) times? by the system [^;]*; the count was reached;",
                          out)
        self.assertIsNotNone(ended, out)
        stepped, each, moved = (int(ended.group(i)) for i in (1, 2, 3))
        self.assertGreaterEqual(moved, 1, out)
        self.assertRegex(lines[0], rf"step trace of thread \d+: {stepped + moved + 1} records")
        gaps = [i for i, line in enumerate(lines) if "(after a gap)" in line]
        self.assertEqual(len(gaps), moved)
        followed = [lines[i + 1] for i in gaps if re.match(r"\s+\d+  ", lines[i + 1])]
        self.assertTrue(followed, lines[-3:])  # only the trace's last record may be one
        for line in followed:
            self.assertRegex(line, r"^\s+\d+  0x[0-9a-f]+ <on_alarm>  ")
        return stepped, each, moved

    def check_clock_reads_run_out(self, out, lines, vdso):
        """Asserts that a trace through the clocks fixture's reads (`strobe step` output, `strobe
        dump` lines) stayed inside the vDSO, [vdso[0], vdso[1]), for 1000 steps in a row at most,
        and that each stay ended at the one call's return address, after the gap of a run out or
        stepped there. Returns how many stays ended."""
        ran = re.search(r", ran (\d+) clock reads? unstepped out of the vDSO "
                        r"\('\(after a gap\)' in the dump\)", out)
        gaps = [line for line in lines if re.match(r"\s+\d+  \(after a gap\)", line)]
        self.assertEqual(len(gaps), int(ran.group(1)) if ran else 0, out)
        pcs = []  # of each record's instruction; None for a gap
        for line in lines:
            if record := re.match(r"\s+\d+  (0x[0-9a-f]+) ", line):
                pcs.append(int(record.group(1), 16))
            elif re.match(r"\s+\d+  \(after a gap\)", line):
                pcs.append(None)
        returns, stay = [], 0
        for k, pc in enumerate(pcs):
            if pc is not None and vdso[0] <= pc < vdso[1]:
                stay += 1
                self.assertLessEqual(stay, 1000,
                                     f"record {k + 1}: still in the vDSO\n{out[-3000:]}")
                continue
            if stay and pc is None:  # a run out: the next record is at its return
                after = int(re.search(r" rip=(0x[0-9a-f]+)", gaps.pop(0)).group(1), 16)
                if k + 1 < len(pcs):
                    self.assertEqual(pcs[k + 1], after)
                returns.append(after)
            elif stay:
                returns.append(pc)
            stay = 0
        self.assertEqual(gaps, [], "every gap is a run out of the vDSO")
        self.assertEqual(len(set(returns)), 1, returns)
        return len(returns)

    def test_a_clock_read_single_steps_cannot_end_is_run_out(self):
        # On a VM whose clock data changes under single steps (kvm-clock here) the vDSO's read
        # retries for ever: the trace had never reached after_clocks.
        out, lines = self.dumped(["b read_clocks", "run",
                                  "strobe step --until after_clocks --quiet"],
                                 harness.fixture("clocks"), ["3"])
        self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in [^;]*; the pc "
                              r"reached 0x[0-9a-f]+;")
        vdso = re.search(r"clocks: vdso (0x[0-9a-f]+)-(0x[0-9a-f]+)", out)
        self.assertIsNotNone(vdso, out)
        self.assertEqual(self.check_clock_reads_run_out(
            out, lines, (int(vdso.group(1), 16), int(vdso.group(2), 16))), 3)

    def test_a_trace_attached_inside_a_clock_read_runs_it_out(self):
        # The process reads the clock all the time: attached, it is most likely inside the vDSO,
        # where the trace begins with no call of its own to return from.
        d = self.debugger
        with harness.Background([harness.fixture("clocks"), "2000000000"]) as process:
            with open(f"/proc/{process.pid}/maps") as maps:
                vdso = next(tuple(int(a, 16) for a in line.split()[0].split("-"))
                            for line in maps if "[vdso]" in line)
            out, lines = self.dumped([d.attach(process.pid), "strobe step --count 3000 --quiet"],
                                     None, ())
        self.assertRegex(out, r"strobe: stepped 3000 instructions of thread \d+ in [^;]*; the "
                              r"count was reached;")
        self.assertGreaterEqual(self.check_clock_reads_run_out(out, lines, vdso), 2)

    def test_a_fork_never_lets_the_process_run_free(self):
        # execs forks a child that exits at once, then waits for it. LLDB had taken the fork's
        # stop for one to resume from: the process ran free to its end, the trace cut short. GDB
        # steps through the fork; under LLDB the trace ends before it, the process still there.
        rc, out = self.commands(["b main", "run", "strobe step --count 3000 --quiet"],
                                harness.fixture("execs"), ["0", harness.fixture("steploop_int"),
                                                           "3"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in [^;]*; "
                              + self.through_a_fork)

    def test_each_step_of_a_rep_string_instruction_records_its_element(self):
        # A single step runs one iteration: rep movsb moves one byte of "WXYZ", rep stosq
        # stores one word. Their records had no memory at all.
        rc, out = self.commands(["b rep_strings", "run", "p/x (unsigned long)source",
                                 "p/x (unsigned long)copy", "p/x (unsigned long)filled",
                                 "strobe step --count 12 --memory"], harness.fixture("repstrings"))
        self.assertEqual(rc, 0, out)
        source, copy, filled = (int(v, 16) for v in re.findall(
            r"^(?:\$\d+ = |\(unsigned long\) )(0x[0-9a-f]+)$", out, re.M))
        moves = re.findall(r"^\s+\d+  0x[0-9a-f]+ .*rep movsb.*$", out, re.M)
        self.assertEqual(len(moves), 4, out)
        for k, (row, byte) in enumerate(zip(moves, b"WXYZ")):
            self.assertIn(f"read [{source + k:#x}]:1={byte:#x}", row)
            self.assertIn(f"write [{copy + k:#x}]:1={byte:#x}", row)
        stores = re.findall(r"^\s+\d+  0x[0-9a-f]+ .*rep stosq.*$", out, re.M)
        self.assertEqual(len(stores), 2, out)
        for k, row in enumerate(stores):
            self.assertIn(f"write [{filled + 8 * k:#x}]:8=0x1122334455667788", row)

    def test_tenet_trace_equals_the_debuggers_own_stepping(self):
        check_tenet_trace(self, self.strobe_run, self.reference_run, STEPS,
                          ("rax", "rsp", "r15", "rip"), STEP_FLAGS)

    def test_a_long_trace_costs_the_debugger_little_memory(self):
        # Decoded, a record of a step takes about a kilobyte (the AVX state alone is 720 bytes):
        # held that way, these 30000 steps took about 30 MB of the debugger's memory.
        rss = (f"{self.script} print('@@rss', [line.split()[1] for line in "
               "open('/proc/self/status') if line.startswith('VmRSS:')][0])")
        rc, out = self.commands(["b step_work", "run", rss, "strobe step --count 30000 --quiet",
                                 rss], harness.fixture("steploop_int"), ["1000000000"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"strobe: stepped 30000 instructions of thread \d+")
        before, after = (int(kb) for kb in re.findall(r"^@@rss (\d+)$", out, re.M))
        self.assertLess(after - before, 6 * 1024, f"the debugger grew by {after - before} kB")

    def test_extended_registers_equal_the_debuggers_own_stepping(self):
        harness.require_avx()
        for how, strobe_run in self.vector_runs():
            with self.subTest(how=how):
                check_extended_trace(self, strobe_run, self.vector_reference, VECTOR_STEPS,
                                     "x86_64", {"ymm1h", "xmm1", "st0", "st1", "ftag", "fstat"})


class GdbStepTest(StepTraceTest, unittest.TestCase):
    debugger = harness.GdbSession
    commands = staticmethod(harness.gdb)
    script = "python"
    delete_breakpoints = "delete"
    pending_breakpoints = ["set breakpoint pending on"]  # else batch mode declines them
    read_pc = "x/i $pc"
    pc_pattern = r"=> (0x[0-9a-f]+)"
    # A software watchpoint is checked by GDB at every step, and listed at every stop.
    watch_commands = ((["watch iteration"], True),
                      (["set can-use-hw-watchpoints 0", "watch iteration"], False))
    watchpoint_values = r"\nOld value = 0\nNew value = 1\n"
    loop_head_breakpoints = (["b *step_work+27 if $rdx == 6"], ["b *step_work+27", "ignore 2 2"])
    one_shot_loop_head = "tbreak *step_work+27"
    list_breakpoints = "info breakpoints"
    through_a_fork = r"(the count was reached|the process executed a new program \()"

    def setUp(self):
        harness.require_built(harness.GDB_SCRIPT)

    def test_a_breakpoint_that_ends_a_trace_is_reported_as_gdb_reports_it(self):
        # As after GDB's own stepi: a temporary breakpoint's stop reads "Temporary breakpoint N,"
        # and a silent one's prints nothing. strobe had said "Breakpoint N," of both.
        silent = ["b *step_work+27", 'python gdb.breakpoints()[-1].commands = "silent"']
        for setup, report in ((["tbreak *step_work+27"], "\nTemporary breakpoint 2, step_work "),
                              (silent, None)):
            with self.subTest(setup=setup):
                rc, out = self.commands(["b step_work", "run", *setup,
                                         "strobe step --count 1000 --quiet"],
                                        harness.fixture("steploop_int"), ["100"])
                self.assertEqual(rc, 0, out)
                self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in .*; "
                                      r"breakpoint 2\b")
                if report:
                    self.assertIn(report, out)
                else:
                    self.assertNotIn("reakpoint 2, ", out)

    def strobe_run(self, tenet_file):
        return harness.gdb(["break walk", "run", f"strobe step --count {STEPS} --memory --quiet",
                            f"strobe dump --tenet --output {tenet_file}", "info breakpoints"],
                           harness.fixture("steps"))

    def reference_run(self, accesses, states, function="walk", fixture="steps", extended=False):
        return harness.run(["gdb", "-nx", "-batch", "-ex", f"break {function}", "-ex", "run",
                            "-ex", f"python import sys; sys.path.insert(0, '{HERE}')",
                            "-ex", "python import step_reference",
                            "-ex", f"python step_reference.run_gdb('{accesses}', '{states}', "
                                   f"extended={extended})",
                            "--args", harness.fixture(fixture)])

    def vector_reference(self, accesses, states):
        return self.reference_run(accesses, states, "mix", "vector", extended=True)

    def vector_runs(self):
        commands = [f"strobe step --count {VECTOR_STEPS} --quiet"]
        vector = harness.fixture("vector")

        def local(dump):  # read with ptrace by strobe's module
            return harness.gdb(["break mix", "run", *commands, f"strobe dump -o {dump}"], vector)

        def remote(dump):  # read from gdbserver's register block
            return self.remote(["break mix", "run", *commands, f"strobe dump -o {dump}"], vector)

        return [("launched", local), ("gdbserver", remote)]

    @staticmethod
    def remote(commands, program, args=(), log=None, kill=True):
        """`commands` in a GDB connected to a gdbserver that runs `program` (`run` in them
        continues it; `kill` ends it after them): (rc, output). `log`: a file for gdbserver's
        own output (its packets, under `monitor set remote-debug 1`)."""
        port = harness.free_port()
        server = ["sh", "-c", f"exec gdbserver 127.0.0.1:{port} {program} {' '.join(args)} "
                              f">/dev/null 2>{log or '/dev/null'}"]
        with harness.Background(server):
            return harness.gdb([f"target remote 127.0.0.1:{port}",
                                *("continue" if c == "run" else c for c in commands),
                                *(["kill"] if kill else [])], program)

    def test_a_remote_step_is_one_step_packet_and_one_register_read(self):
        # GDB's own stepi, which strobe's steps through gdbserver were, sends eight packets: its
        # two breakpoints out and in, the step, a stack read, the thread list, the registers. strobe
        # now sends the step and the register read itself, and GDB steps only where it has
        # something to do: the first step, off the breakpoint the trace starts at, and the last,
        # which leaves GDB's own stop where the trace ends.
        steps = 40
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "packets")
            rc, out = self.remote(["break step_work", "run", "monitor set remote-debug 1",
                                   f"strobe step --count {steps} --quiet",
                                   "monitor set remote-debug 0"],
                                  harness.fixture("steploop_int"), ["1000000000"], log)
            with open(log, errors="replace") as f:
                packets = re.findall(r'getpkt \("([^"]*)"', f.read())
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, rf"strobe: stepped {steps} instructions of thread \d+")
        self.assertEqual(sum(p.startswith("vCont;s") for p in packets), steps, packets[:40])
        # The rest is GDB's two stepi: each inserts its breakpoints (here the loader's, and the
        # user's where it does not step off it) and reads the thread list; registers are read
        # around them (GDB's, and strobe's once GDB is done).
        self.assertLessEqual(sum(p == "g" for p in packets), steps + 5, packets[:40])
        self.assertLessEqual(sum(p.startswith("Z0") for p in packets), 3, packets[:40])
        self.assertLessEqual(sum(p.startswith("qXfer:threads:read") for p in packets), 3,
                             packets[:40])

    def test_a_remote_trace_equals_one_of_gdbs_stepi(self):
        # The same 2000 steps of `walk` with their memory, through gdbserver, made with strobe's
        # packets and (the packets' way turned off) with GDB's stepi: the same dump.
        no_packets = ("python import strobe_gdb.target; "
                      "strobe_gdb.target.GdbTarget.remote_layout = lambda self: None")
        dumps = []
        for setup in ([], [no_packets]):
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "trace.txt")
                rc, out = self.remote([*setup, "break walk", "run",
                                       f"strobe step --count {STEPS} --memory --quiet",
                                       f"strobe dump --output {path}"], harness.fixture("steps"))
                self.assertEqual(rc, 0, out)
                self.assertNotIn("Error", out)
                self.assertRegex(out, rf"strobe: stepped {STEPS} instructions of thread \d+")
                with open(path) as f:
                    dumps.append(re.sub(r"thread \d+", "thread N", f.read()))
        self.assertGreater(dumps[0].count("\n"), STEPS)
        self.assertIn("read [", dumps[0])
        self.assertEqual(dumps[0], dumps[1])

    def test_a_remote_trace_stops_where_gdb_would(self):
        # Breakpoints GDB would not stop at are stepped through, a one-shot one ends the trace,
        # as launched; a fault the trace runs into is GDB's to show, and the program's to get.
        fixture = harness.fixture("steploop_int")
        for breakpoint in self.loop_head_breakpoints:
            with self.subTest(breakpoint=breakpoint):
                self.check_stepped_over(*self.remote(
                    ["b step_work", "run", *breakpoint, "strobe step --count 1000",
                     "p/x (unsigned long)$rdx"], fixture, ["100"]))
        with self.subTest(breakpoint=self.one_shot_loop_head):
            self.check_one_shot(*self.remote(
                ["b step_work", "run", self.one_shot_loop_head, "strobe step --count 1000",
                 "p/x (unsigned long)$rdx", self.list_breakpoints], fixture, ["100"]))
        with self.subTest(signal="SIGSEGV"):
            rc, out = self.remote(["b main", "run", "strobe step --count 100000 --quiet",
                                   "p $_siginfo.si_signo", "continue"],
                                  harness.fixture("crash"), ["0"], kill=False)
            self.assertEqual(rc, 0, out)
            self.assertRegex(out, r"\nProgram received signal SIGSEGV, Segmentation fault\.\n"
                                  r"main \(.*crash\.c:\d+\n\d+\s+return \*null_pointer;")
            self.assertRegex(out, r"strobe: stepped \d+ instructions of thread \d+ in [^\n]*; "
                                  r"signal SIGSEGV;")
            self.assertRegex(out, r"\$1 = 11\n")
            self.assertIn("\nProgram terminated with signal SIGSEGV, Segmentation fault.", out)

    def test_a_remote_trace_steps_signal_handlers_after_a_gap(self):
        # As launched, except that a remote step is slower than the timer's period is short.
        out, lines = self.dumped(["b spin", "run", "delete", "strobe step --count 3000 --quiet"],
                                 harness.fixture("ticks"), ["100000000"], run=self.remote)
        self.check_handlers_after_gaps(out, lines)

    def test_a_trace_leaves_breakpoint_numbers_and_signal_settings_as_they_were(self):
        # GDB stops for the signals it would pass silently only while a trace runs, by their
        # `handle` settings, which are the user's again afterwards; catchpoints for them took two
        # breakpoint numbers from the user's at every trace.
        rc, out = self.commands(["b step_work", "run", "handle SIGURG nostop print",
                                 "strobe step --count 50 --quiet", "b main",
                                 "info signals SIGALRM", "info signals SIGURG"],
                                harness.fixture("steploop_int"), ["100"])
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"strobe: stepped 50 instructions of thread \d+")
        self.assertRegex(out, r"\nBreakpoint 2 at 0x[0-9a-f]+: file ")
        self.assertRegex(out, r"\nSIGALRM\s+No\s+No\s+Yes\s+Alarm clock\n")
        self.assertRegex(out, r"\nSIGURG\s+No\s+Yes\s+Yes\s+Urgent I/O condition\n")

    def test_gdbs_own_stop_is_where_a_trace_ends(self):
        # GDB steps over a breakpoint only where it last stopped the thread itself. Were a trace's
        # last steps made behind its back, a breakpoint set where the trace ended would report a
        # hit at `continue` before the thread moved, and `info program` would name an older pc.
        # Each trace ends where the program passes once: `continue` from there reaches its end.
        # The last one ends after a loop, at its jump's fall-through: the jump is GDB's step only
        # the once it is not taken.
        traces = (("steps", [], "walk", "--count 5", 5),
                  ("steps", [], "walk", "--until *walk+20", 4),
                  ("steploop_int", ["300"], "step_work", "--until *step_work+60", 3007))
        for name, run in (("launched", harness.gdb), ("gdbserver", self.remote)):
            for fixture, args, function, trace, steps in traces:
                with self.subTest(name=name, trace=trace):
                    rc, out = run([f"break {function}", "run", f"strobe step {trace} --quiet",
                                   "info program", "p/x $pc", "break *$pc", "continue"],
                                  harness.fixture(fixture), args,
                                  **({"kill": False} if name != "launched" else {}))
                    self.assertEqual(rc, 0, out)
                    self.assertRegex(out, rf"strobe: stepped {steps} instructions of thread \d+")
                    stopped = re.search(r"\nProgram stopped at (0x[0-9a-f]+)\.", out)
                    pc = re.search(r"\n\$1 = (0x[0-9a-f]+)\n", out)
                    self.assertTrue(stopped and pc, out)
                    self.assertEqual(int(stopped[1], 16), int(pc[1], 16), out)
                    self.assertRegex(out, r"\n\[Inferior 1 \(process \d+\) exited normally\]")
                    self.assertNotRegex(out, r"\nBreakpoint \d+, 0x", out)

    def test_a_remote_trace_gives_back_the_users_step_settings(self):
        # Over gdbserver strobe steps with GDB's `stepi`, under settings of its own
        # (scheduler-locking, notifications); afterwards they are the user's again.
        rc, out = self.remote(["break step_work", "run", "set scheduler-locking off",
                               "strobe step --count 20 --quiet", "show scheduler-locking",
                               "show suppress-cli-notifications",
                               "set suppress-cli-notifications on",
                               "strobe step --count 20 --quiet",
                               "show suppress-cli-notifications"],
                              harness.fixture("steploop_int"), ["1000000000"])
        self.assertEqual(rc, 0, out)
        self.assertEqual(len(re.findall(r"strobe: stepped 20 instructions", out)), 2, out)
        self.assertIn('Mode for locking scheduler during execution is "off".', out)
        self.assertEqual(re.findall(r"Suppression of printing CLI notifications is (\w+)", out),
                         ["off", "on"], out)


class LldbStepTest(StepTraceTest, unittest.TestCase):
    debugger = harness.LldbSession
    commands = staticmethod(harness.lldb)
    script = "script"
    delete_breakpoints = "breakpoint delete -f"
    pending_breakpoints = []
    read_pc = "register read pc"
    pc_pattern = r"rip = (0x[0-9a-f]+)"
    loop_head_breakpoints = (['br set -a "(char *)step_work + 27" -c "$rdx == 6"'],
                             ['br set -a "(char *)step_work + 27" -i 2'])
    one_shot_loop_head = 'br set -o true -a "(char *)step_work + 27"'
    list_breakpoints = "breakpoint list"
    through_a_fork = r"the next instruction forks the process \(system call 56\)"
    watchpoint_values = r"\nold value: 0\nnew value: 1\n"
    watch_commands = ((["watchpoint set variable iteration"], True),)

    def setUp(self):
        harness.require_built(harness.LLDB_PLUGIN)

    def strobe_run(self, tenet_file):
        return harness.lldb(["b walk", "run", f"strobe step --count {STEPS} --memory --quiet",
                             f"strobe dump --tenet -o {tenet_file}"], harness.fixture("steps"))

    def reference_run(self, accesses, states, function="walk", fixture="steps", extended=False):
        return harness.run(["lldb-19", "-b", "--no-lldbinit", "-o", f"b {function}", "-o", "run",
                            "-o", f"script import sys; sys.path.insert(0, '{HERE}')",
                            "-o", "script import step_reference",
                            "-o", "script step_reference.run_lldb(lldb.debugger, "
                                  f"'{accesses}', '{states}', extended={extended})",
                            "--", harness.fixture(fixture)])

    def vector_reference(self, accesses, states):
        return self.reference_run(accesses, states, "mix", "vector", extended=True)

    def test_the_dynamic_loaders_breakpoint_is_stepped_by_lldbs_own_steps_too(self):
        # Without strobe's library in lldb-server (as behind a remote one) each step is LLDB's
        # `thread step-inst`: the loader's breakpoint gets its hidden owner before that step too.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.txt")
            rc, out = harness.lldb(["b before_call", "run", "finish",
                                    "strobe step --until unloaded --quiet",
                                    f"strobe dump --output {path}"], harness.fixture("unload"),
                                   [harness.fixture("libunload_plugin.so")],
                                   env={"STROBE_SERVER_TAP": "0"})
            self.assertEqual(rc, 0, out)
            with open(path) as f:
                lines = f.read().splitlines()
        self.assert_loader_calls_stepped(out, lines)

    def vector_runs(self):
        def run(tap):
            return lambda dump: harness.lldb(
                ["b mix", "run", f"strobe step --count {VECTOR_STEPS} --quiet",
                 f"strobe dump -o {dump}"], harness.fixture("vector"),
                env={"STROBE_SERVER_TAP": tap})

        # Inside lldb-server, by strobe's library there; and from LLDB, with a `g` packet.
        return [("lldb-server tap", run(None)), ("gdb-remote packets", run("0"))]


if __name__ == "__main__":
    unittest.main()
