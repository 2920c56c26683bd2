"""strobe's Target port in GDB, as the engine uses it (through _strobe.Port): breakpoints whose
handler reads the thread, single steps, extended registers, location lookup and the current
thread, each checked against what GDB itself says. `Port(..., direct=False)` is the same port
answering through GDB's Python API only, the reference for the direct (ptrace) paths.

With -v, CostTest prints what each operation costs on this machine."""
import json
import re
import sys
import unittest

import harness
from test_gdb_capture import require_gdb

PRELUDE = """
import json, re, time
import gdb
import strobe_gdb
from strobe_gdb import _strobe
port = _strobe.Port(strobe_gdb._target)
gdb_port = _strobe.Port(strobe_gdb._target, direct=False)

def result(**values):
    print("RESULT " + json.dumps(values))

def addresses(text):
    return [int(a, 16) for a in re.findall(r"0x[0-9a-f]+", text)]
"""


def results(out):
    found = [json.loads(line) for line in re.findall(r"^RESULT (.*)$", out, re.MULTILINE)]
    if not found:
        raise AssertionError(f"the script printed no result:\n{out}")
    return found


def run_script(script, program, args=(), before=(), after=()):
    return harness.gdb_python(PRELUDE + script, harness.fixture(program), args, before, after)


class BreakpointTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def test_handler_counts_every_hit_and_the_program_runs_to_its_end(self):
        rc, out = run_script("""
leaf = port.resolve("leaf")
probe = port.insert_breakpoint(leaf[0], 2)
gdb.execute("continue")
hits, stack = probe.hits, list(probe.last_stack)
probe.remove()
result(leaf=leaf, hits=hits, stack=stack,
       left=addresses(gdb.execute("maint info breakpoints", to_string=True)))
""", "calls", ["3000"], before=["break main", "run", "delete"])
        self.assertEqual(rc, 0, out)
        self.assertIn("calls: 3000 leaf calls", out)
        self.assertRegex(out, r"\[Inferior 1 \(process \d+\) exited normally\]")
        r = results(out)[0]
        self.assertEqual(r["hits"], 3000, out)
        self.assertEqual(len(r["stack"]), 2, out)
        self.assertEqual(r["stack"][0], r["leaf"][0], out)
        self.assertNotIn(r["leaf"][0], r["left"], out)  # the breakpoint is gone from GDB

    def test_handler_runs_while_strobe_records(self):
        rc, out = run_script("""
probe = port.insert_breakpoint(port.resolve("leaf")[0], 2)
""", "calls", ["20000"], before=["break main", "run", "delete"],
            after=["strobe record --frequency 1000", "python result(hits=probe.hits)"])
        self.assertEqual(rc, 0, out)
        self.assertIn("calls: 20000 leaf calls", out)
        how, samples = harness.ended(out)
        self.assertEqual(how, "the process exited with status 0", out)
        self.assertGreater(samples, 0, out)
        self.assertEqual(results(out)[0]["hits"], 20000, out)

    def test_a_user_breakpoint_at_the_same_address_still_stops(self):
        rc, out = run_script("""
leaf = port.resolve("leaf")[0]
probe = port.insert_breakpoint(leaf, 16)
gdb.execute("break leaf")
gdb.execute("continue")
tid = port.current_thread()
first = dict(hits=probe.hits, probe_stack=list(probe.last_stack),
             gdb_stack=gdb_port.read_thread(tid, 16)[1], pc=int(gdb.parse_and_eval("$pc")))
gdb.execute("continue")
second = probe.hits
gdb.execute("delete")
gdb.execute("continue")
result(leaf=leaf, first=first, second=second, last=probe.hits)
""", "calls", ["50"], before=["break main", "run", "delete"])
        self.assertEqual(rc, 0, out)
        self.assertEqual(len(re.findall(r"\nBreakpoint 2, leaf \(", out)), 2, out)
        r = results(out)[0]
        self.assertEqual(r["first"]["pc"], r["leaf"], out)
        self.assertEqual(r["first"]["hits"], 1, out)
        # The handler's 16 frames are GDB's own backtrace.
        self.assertEqual(r["first"]["probe_stack"], r["first"]["gdb_stack"], out)
        self.assertEqual(r["second"], 2, out)
        self.assertEqual(r["last"], 50, out)
        self.assertIn("calls: 50 leaf calls", out)

    def test_a_breakpoint_removed_by_its_own_handler_leaves_nothing_behind(self):
        rc, out = run_script("""
leaf = port.resolve("leaf")[0]
probe = port.insert_breakpoint(leaf, 1, remove_after=1)
gdb.execute("continue")
result(leaf=leaf, hits=probe.hits,
       left=addresses(gdb.execute("maint info breakpoints", to_string=True)))
""", "calls", ["500"], before=["break main", "run", "delete"])
        self.assertEqual(rc, 0, out)
        self.assertIn("calls: 500 leaf calls", out)
        r = results(out)[0]
        self.assertEqual(r["hits"], 1, out)
        self.assertNotIn(r["leaf"], r["left"], out)

    def test_an_unmapped_address_takes_no_breakpoint(self):
        rc, out = run_script("""
result(probe=port.insert_breakpoint(0x10, 1) is None)
""", "calls", ["10"], before=["break main", "run"], after=["continue"])
        self.assertEqual(rc, 0, out)
        self.assertTrue(results(out)[0]["probe"], out)
        self.assertIn("calls: 10 leaf calls", out)


class ReadThreadTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def test_sixteen_frames_and_registers_match_gdb(self):
        rc, out = run_script("""
tid = port.current_thread()
result(direct=port.read_thread(tid, 16), via_gdb=gdb_port.read_thread(tid, 16))
""", "calls", ["3"], before=["break leaf", "run"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        self.assertEqual(r["direct"][0], r["via_gdb"][0], out)  # every register
        self.assertEqual(len(r["via_gdb"][1]), 16, out)  # leaf and 15 descend frames
        self.assertEqual(r["direct"][1], r["via_gdb"][1], out)

    def test_the_caller_matches_gdb_at_every_instruction(self):
        # Through leaf, operator new, the PLT and the dynamic linker's lazy binding, malloc:
        # prologues, epilogues and code without frame pointers.
        rc, out = run_script("""
tid = port.current_thread()
mismatches, compared = [], 0
for _ in range(600):
    direct = port.read_thread(tid, 3)[1]
    via_gdb = gdb_port.read_thread(tid, 3)[1]
    compared += 1
    if direct[:len(via_gdb)] != via_gdb:
        mismatches.append([direct, via_gdb])
    if port.step_instruction(tid)[0] != _strobe.StopKind.Step:
        break
result(compared=compared, mismatches=mismatches[:5])
""", "calls", ["3"], before=["break leaf", "run"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        self.assertEqual(r["compared"], 600, out)
        self.assertEqual(r["mismatches"], [], out)

    def test_extended_registers_match_gdb(self):
        harness.require_avx()
        # In `mix`'s loop, ymm1's upper half is set; in `series`, long doubles are on the x87
        # stack.
        rc, out = run_script("""
def read():
    tid = port.current_thread()
    halves = [int(gdb.parse_and_eval(f"${r}.v4_int64[{half}]")) & (2**64 - 1)
              for r in [f"ymm{i}" for i in range(16)] for half in range(4)]
    control = [int(gdb.parse_and_eval(f"${r}")) for r in ("cs", "mxcsr", "fctrl", "ftag")]
    return dict(direct=port.read_extended(tid), via_gdb=gdb_port.read_extended(tid), ymm=halves,
                control=control)
in_mix = read()
gdb.execute("break series")
gdb.execute("continue")
gdb.execute("stepi 12")
result(in_mix=in_mix, in_series=read())
""", "vector", before=["break mix", "run", "stepi 15"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        for where in ("in_mix", "in_series"):
            with self.subTest(where=where):
                at = r[where]
                # cs ss ds es fs gs mxcsr fctrl fstat, xmm0-15 as two slots each (low first),
                # ftag, st0-7 two slots each, ymm0h-ymm15h two slots each
                self.assertEqual(len(at["direct"]), 9 + 32 + 1 + 16 + 32, out)
                self.assertEqual(at["direct"], at["via_gdb"], out)
                self.assertEqual([at["direct"][i] for i in (0, 6, 7, 41)], at["control"], out)
                xmm = [half for i, half in enumerate(at["ymm"]) if i % 4 < 2]
                upper = [half for i, half in enumerate(at["ymm"]) if i % 4 >= 2]
                self.assertEqual(at["direct"][9:41], xmm, out)
                self.assertEqual(at["direct"][58:], upper, out)
        self.assertTrue(any(r["in_mix"]["direct"][58:]), out)  # ymm1's upper half
        self.assertTrue(any(r["in_series"]["direct"][42:58]), out)  # the x87 stack
        self.assertNotEqual(r["in_series"]["control"][3], 0xffff, out)  # not every tag empty


class StepTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def test_steps_match_gdb_stepi(self):
        # Two runs of the same deterministic code: 150 steps by the port, then 150 `stepi`.
        rc, out = run_script("""
def trace(step):
    gdb.execute("run")
    tid = port.current_thread()
    seen = []
    for _ in range(150):
        step(tid)
        seen.append(gdb_port.read_thread(tid, 1)[0])
    return seen

def port_step(tid):
    assert port.step_instruction(tid)[0] == _strobe.StopKind.Step

direct = trace(port_step)
stepi = trace(lambda tid: gdb.execute("stepi", to_string=True))
result(same=direct == stepi, pcs=len({regs[16] for regs in direct}),
       first_difference=next(([a, b] for a, b in zip(direct, stepi) if a != b), None))
""", "steps", before=["break walk", "set suppress-cli-notifications on"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        self.assertTrue(r["same"], r["first_difference"])
        self.assertGreater(r["pcs"], 10, out)

    def test_gdb_sees_where_uninterrupted_steps_left_the_thread(self):
        # A step trace reads through the port only; GDB catches up when the command returns.
        rc, out = run_script("""
tid = port.current_thread()
steps, stop, _ = port.step_instructions(tid, 500)
result(steps=steps, direct=port.read_thread(tid, 2), via_gdb=gdb_port.read_thread(tid, 2),
       pc=int(gdb.parse_and_eval("$pc")))
""", "steps", before=["break walk", "run"], after=["bt 1"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        self.assertEqual(r["steps"], 500, out)
        self.assertEqual(r["direct"], r["via_gdb"], out)
        self.assertEqual(r["pc"], r["direct"][1][0], out)
        self.assertRegex(out, rf"#0 +0x0*{r['pc']:x} in walk \(")

    def test_other_threads_stay_where_they_are(self):
        rc, out = run_script("""
tid = port.current_thread()
others = [t for t in port.threads() if t != tid]
before = {t: port.read_thread(t, 1)[0] for t in others}
kinds = {port.step_instruction(tid)[0].name for _ in range(100)}
after = {t: port.read_thread(t, 1)[0] for t in others}
result(kinds=sorted(kinds), others=len(others), unchanged=before == after)
""", "threads", ["2", "2"], before=["break busy_worker", "run"], after=["kill"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        self.assertEqual(r["kinds"], ["Step"], out)
        self.assertGreaterEqual(r["others"], 2, out)
        self.assertTrue(r["unchanged"], out)

    def test_a_step_that_arrives_at_a_user_breakpoint_is_the_users(self):
        rc, out = run_script("""
walk = port.resolve("walk")[0]
gdb.execute("break walk")
tid = port.current_thread()
steps = 0
while True:
    stop = port.step_instruction(tid)
    if stop[0] != _strobe.StopKind.Step or steps > 200000:
        break
    steps += 1
result(kind=stop[0].name, description=stop[4], steps=steps, walk=walk,
       pc=int(gdb.parse_and_eval("$pc")))
""", "steps", before=["break main", "run"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        self.assertEqual(r["kind"], "Breakpoint", out)
        self.assertEqual(r["description"], "breakpoint 2", out)
        self.assertEqual(r["pc"], r["walk"], out)
        self.assertGreater(r["steps"], 0, out)
        self.assertRegex(out, r"\nBreakpoint 2, walk \(")

    def test_a_crash_during_a_step_reaches_the_user(self):
        rc, out = run_script("""
tid = port.current_thread()
for _ in range(50):
    stop = port.step_instruction(tid)
    if stop[0] != _strobe.StopKind.Step:
        break
result(kind=stop[0].name, signo=stop[2])
""", "crash", ["0"], before=["break crash.c:18", "run"], after=["bt 1"])
        r = results(out)[0]
        self.assertEqual((r["kind"], r["signo"]), ("Signal", 11), out)
        self.assertIn("Program received signal SIGSEGV, Segmentation fault.", out)
        self.assertRegex(out, r"#0 +main \(.*crash\.c:18")


class ArmingTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def test_arming_without_a_signal_only_reports_stops(self):
        # Heap tracking arms with signal 0: no signal is silenced, the exit still reaches it.
        rc, out = harness.gdb(["break main", "run", "strobe mem start", "continue",
                               "info breakpoints"], harness.fixture("calls"), ["100"])
        self.assertEqual(rc, 0, out)
        self.assertIn("calls: 100 leaf calls", out)
        self.assertIn("the process exited with status 0; the heap as strobe saw it", out)
        self.assertNotIn("catchpoint", out)


class LocationTest(unittest.TestCase):
    def setUp(self):
        require_gdb()

    def test_resolve(self):
        rc, out = run_script("""
def module_spans(name):
    spans = []
    for line in gdb.execute("info proc mappings", to_string=True).splitlines():
        fields = line.split()
        if fields and fields[-1].rsplit("/", 1)[-1].startswith(name):
            spans.append((int(fields[0], 16), int(fields[1], 16)))
    return spans

info_line = gdb.execute("info line calls.cpp:14", to_string=True)
result(malloc=port.resolve("malloc"), libc=module_spans("libc.so.6"),
       new=port.resolve("_Znwm"), libstdcxx=module_spans("libstdc++.so.6"),
       leaf=port.resolve("leaf"), leaf_gdb=addresses(gdb.execute("info address leaf",
                                                                 to_string=True)),
       line=port.resolve("calls.cpp:14"), line_gdb=addresses(info_line)[:1],
       star=port.resolve("*0x1234"), nothing=port.resolve("no_such_function_anywhere"),
       current=port.current_thread(), selected=gdb.selected_thread().ptid[1])
""", "calls", ["3"], before=["break leaf", "run"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]

        def inside(address, spans):
            return any(start <= address < end for start, end in spans)

        self.assertEqual(len(r["malloc"]), 1, out)
        self.assertTrue(inside(r["malloc"][0], r["libc"]), out)
        self.assertEqual(len(r["new"]), 1, out)
        self.assertTrue(inside(r["new"][0], r["libstdcxx"]), out)
        self.assertEqual(r["leaf"], r["leaf_gdb"], out)
        self.assertEqual(r["line"], r["line_gdb"], out)
        self.assertEqual(r["star"], [0x1234], out)
        self.assertEqual(r["nothing"], [], out)
        self.assertEqual(r["current"], r["selected"], out)

    def test_current_thread_is_the_selected_one(self):
        rc, out = run_script("""
first = (port.current_thread(), gdb.selected_thread().ptid[1])
gdb.execute("thread 1")
result(first=first, main=port.current_thread(), pid=gdb.selected_inferior().pid)
""", "threads", ["2", "2"], before=["break busy_worker", "run"], after=["kill"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        self.assertEqual(r["first"][0], r["first"][1], out)
        self.assertNotEqual(r["first"][0], r["pid"], out)  # a worker, not the main thread
        self.assertEqual(r["main"], r["pid"], out)


class CostTest(unittest.TestCase):
    """What the port's operations cost here, direct and through GDB (printed with -v). GDB's CPU
    time is printed beside wall time: on a loaded machine only the former means much."""

    def setUp(self):
        require_gdb()

    def test_costs(self):
        calls = 4000
        rc, out = run_script("""
def timed_run(depth):
    gdb.execute("tbreak main")
    gdb.execute("run")
    probe = port.insert_breakpoint(port.resolve("leaf")[0], depth)
    wall, cpu = time.perf_counter(), time.thread_time()
    gdb.execute("continue")
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    hits, handler = probe.hits, probe.handler_seconds
    probe.remove()
    return dict(hits=hits, wall_us=wall / hits * 1e6, cpu_us=cpu / hits * 1e6,
                handler_us=handler / hits * 1e6)

result(costs={depth: timed_run(depth) for depth in (2, 16)})
""", "calls", [str(calls)])
        self.assertEqual(rc, 0, out)
        breakpoints = results(out)[0]
        rc, out = run_script("""
tid = port.current_thread()
def per_call(fn, n):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6
cpu = time.thread_time()
direct_steps = port.step_instructions(tid, 3000)
direct_cpu = time.thread_time() - cpu
cpu = time.thread_time()
gdb_steps = gdb_port.step_instructions(tid, 300)
gdb_cpu = time.thread_time() - cpu
result(direct_step_us=direct_steps[2] / direct_steps[0] * 1e6,
       direct_step_cpu_us=direct_cpu / direct_steps[0] * 1e6,
       gdb_step_us=gdb_steps[2] / gdb_steps[0] * 1e6,
       gdb_step_cpu_us=gdb_cpu / gdb_steps[0] * 1e6,
       direct_read2_us=per_call(lambda: port.read_thread(tid, 2), 500),
       gdb_read2_us=per_call(lambda: gdb_port.read_thread(tid, 2), 500),
       direct_read16_us=per_call(lambda: port.read_thread(tid, 16), 500))
""", "calls", ["3"], before=["break leaf", "run"])
        self.assertEqual(rc, 0, out)
        steps = results(out)[0]
        for depth, c in breakpoints["costs"].items():
            self.assertEqual(c["hits"], calls, breakpoints)
            sys.stderr.write(f"\n  breakpoint hit, handler reading {depth} frames: "
                             f"{c['wall_us']:.0f} us per hit ({c['cpu_us']:.0f} us of GDB's CPU, "
                             f"{c['handler_us']:.1f} us in the handler)")
        sys.stderr.write(
            f"\n  stepInstruction: {steps['direct_step_us']:.1f} us direct "
            f"({steps['direct_step_cpu_us']:.1f} us CPU), {steps['gdb_step_us']:.0f} us through "
            f"GDB's stepi ({steps['gdb_step_cpu_us']:.0f} us CPU)"
            f"\n  readThread: {steps['direct_read2_us']:.1f} us direct (2 frames), "
            f"{steps['direct_read16_us']:.1f} us (16 frames); "
            f"{steps['gdb_read2_us']:.1f} us through GDB (2 frames)\n")
        self.assertLess(steps["direct_step_us"], steps["gdb_step_us"], steps)


class DataAddressTest(unittest.TestCase):
    """Target::dataAddress, which `strobe loop --split expr:VARIABLE` reads the variable through."""

    def setUp(self):
        require_gdb()

    def test_a_global_of_the_launched_executable_is_at_its_load_address(self):
        rc, out = run_script("""
rows = [line.split() for line in gdb.execute("info proc mappings", to_string=True).splitlines()]
result(direct=port.data_address("iteration"), through_gdb=gdb_port.data_address("iteration"),
       gdb=[int(gdb.parse_and_eval("&iteration")), int(gdb.parse_and_eval("sizeof(iteration)"))],
       executable=[[int(r[0], 16), int(r[1], 16)] for r in rows
                   if r and r[-1].endswith("/loop_funcm")],
       function=port.data_address("func_M"), asm_function=gdb_port.data_address("func_A"),
       star=port.data_address("*0x1234"), nothing=port.data_address("no_such_variable_anywhere"),
       nothing_gdb=gdb_port.data_address("no_such_variable_anywhere"))
""", "loop_funcm", ["30"], before=["break func_M", "run"], after=["kill"])
        self.assertEqual(rc, 0, out)
        r = results(out)[0]
        self.assertEqual(r["gdb"][1], 8, out)  # volatile uint64_t
        self.assertEqual(r["direct"], r["gdb"], out)
        self.assertEqual(r["through_gdb"], r["gdb"], out)
        # A PIE: the link-time address (a few KiB) would lie in none of its mappings.
        self.assertTrue(any(start <= r["direct"][0] < end for start, end in r["executable"]), out)
        self.assertIsNone(r["function"], out)
        self.assertIsNone(r["asm_function"], out)  # a symbol without debug information
        self.assertEqual(r["star"], [0x1234, 0], out)
        self.assertIsNone(r["nothing"], out)
        self.assertIsNone(r["nothing_gdb"], out)


# func_B of examples/loop/funcm.c: an asm function with an ELF symbol size and no debug
# information, 9 ALU instructions and ret in 3+4+3+4+3+4+3+4+3+1 = 32 bytes.
FUNC_B = ["add rax, rdi", "imul rdx, rax", "xor rcx, rdx", "add rax, 3", "sub rdx, rcx",
          "imul rax, rdx", "add rcx, rax", "xor rdx, 7", "add rax, rcx", "ret"]
START_THREAD_SYMBOL = ("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_delete"
                       "IS1_EEPFvvE")
START_THREAD = ("std::thread::_M_start_thread(std::unique_ptr<std::thread::_State, "
                "std::default_delete<std::thread::_State> >, void (*)())")
ANNOTATED_ROW = re.compile(r"\s*(?:\d+\s+[\d.]+%\s+)?(0x[0-9a-f]+)\s+(\S.*?)\s*")


def annotated(test, out, function):
    """(start, [(address, instruction)]) from `strobe annotate FUNCTION --asm` in the output."""
    header = rf"strobe annotate: {re.escape(function)} at (0x[0-9a-f]+) .*\n.*\n"
    m = re.search(header + r"((?:.*\n)*?)-+\n", out)
    test.assertIsNotNone(m, out)
    rows = [ANNOTATED_ROW.fullmatch(line) for line in m.group(2).splitlines()]
    test.assertTrue(rows and all(rows), out)
    return int(m.group(1), 16), [(int(r.group(1), 16), r.group(2)) for r in rows]


class SymbolTest(unittest.TestCase):
    """Target::symbolize for code without debug information: GDB knows no size for it, the ELF
    symbol tables do (and name it as the LLDB front-end does, see test_lldb_port.py)."""

    def setUp(self):
        require_gdb()

    def test_an_asm_function_is_named_and_sized_by_its_elf_symbol(self):
        rc, out = harness.gdb(["break func_M", "run", "delete", "strobe record --duration 0.5",
                               "strobe profile --by function", "strobe annotate func_B --asm",
                               "kill"], harness.fixture("loop_funcm"), ["30"])
        self.assertEqual(rc, 0, out)
        profile = harness.function_percentages(out.split("strobe annotate:")[0])
        self.assertIn("func_B", profile, out)
        self.assertNotIn("func_", profile, out)  # GDB's demangler reads "_B" as a mangled suffix
        start, rows = annotated(self, out, "func_B")
        self.assertEqual([instruction for _, instruction in rows], FUNC_B, out)
        self.assertEqual(rows[0][0], start, out)
        self.assertEqual(rows[-1][0] + 1 - start, 32, out)  # the last instruction: ret, 1 byte

    def test_through_gdb_alone_the_name_is_the_symbols(self):
        # The fallback for a process whose files strobe cannot read (a remote target): GDB's
        # minimal symbol, its size unknown, so no code is captured.
        rc, out = run_script("""
session = _strobe.Session(strobe_gdb._target, direct=False)
session.execute("record --duration 0.3")
print(session.execute("profile --by function")[1])
print(session.execute("annotate func_B --asm")[1])
""", "loop_funcm", ["30"], before=["break func_M", "run", "delete"], after=["kill"])
        self.assertEqual(rc, 0, out)
        profile = harness.function_percentages(out)
        self.assertIn("func_B", profile, out)
        self.assertNotIn("func_", profile, out)
        self.assertIn("no machine code of func_B in this capture", out)

    def test_a_cxx_function_and_its_plt_entry_are_named_as_gdb_shows_them(self):
        # libstdc++ has no debug information here; the program calls std::thread::_M_start_thread
        # through its .plt. GNU's demangler writes "> >", LLDB's ">>".
        rc, out = harness.gdb(["break main", "run",
                               f"strobe step --until {START_THREAD_SYMBOL} --quiet", "strobe dump",
                               "strobe step --count 1 --quiet", "strobe dump"],
                              harness.fixture("calls"), ["3", "4", "2"])
        self.assertEqual(rc, 0, out)
        _, to_the_function, in_the_function = out.split("strobe: stepped ")
        self.assertRegex(to_the_function, rf" <{re.escape(START_THREAD)}@plt> +jmp ", out)
        self.assertIn(f" <{START_THREAD}>  ", in_the_function, out)


if __name__ == "__main__":
    unittest.main()
