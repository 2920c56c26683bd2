"""Runs the real lldb-19 and gdb in batch mode with strobe loaded, for the integration tests.

ctest passes the build's paths in the environment (see tests/CMakeLists.txt)."""
import errno
import functools
import gzip
import json
import os
import pty
import re
import select
import signal
import socket
import subprocess
import tempfile
import time
import unittest

BUILD = os.environ.get("STROBE_BUILD_DIR", "")
LLDB_PLUGIN = os.environ.get("STROBE_LLDB_PLUGIN", "")
# strobe's lldb-server launcher, beside the plugin (built and installed so).
LLDB_SERVER_LAUNCHER = os.path.join(os.path.dirname(LLDB_PLUGIN), "strobe-lldb-server")
GDB_SCRIPT = os.environ.get("STROBE_GDB_SCRIPT", "")
FIXTURES = os.environ.get("STROBE_FIXTURES", "")
STROBE_REPORT = os.environ.get("STROBE_REPORT", "")
TIMEOUT = 240


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def source_line(path, text):
    """FILE:LINE of the first line of examples/PATH holding `text`, so that the tests follow the
    fixtures when they are edited."""
    with open(os.path.join(EXAMPLES, path)) as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return f"{os.path.basename(path)}:{number}"
    raise AssertionError(f"no line holding {text!r} in {path}")


def fixture(name):
    return os.path.join(FIXTURES, name)


def require_i386_programs():
    """Skips the test where the kernel runs no 32-bit x86 program (built without IA32 emulation,
    or with it turned off): neither debugger can start the fixture spin-i386 there."""
    try:
        program = subprocess.Popen([fixture("spin-i386")], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
    except OSError as error:
        if error.errno == errno.ENOEXEC:
            raise unittest.SkipTest("this kernel runs no 32-bit x86 programs")
        raise
    program.kill()
    program.wait()


# What both debuggers say for a 32-bit x86 inferior (fixture spin-i386).
UNSUPPORTED_I386 = ("error: strobe does not support the architecture 'i386'; it samples x86-64 "
                    "and AArch64 programs")


def run(argv, timeout=TIMEOUT, env=None):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout + proc.stderr


def lldb(commands, program=None, args=(), timeout=TIMEOUT, env=None):
    """Runs lldb-19 -b with strobe loaded, then `commands` in order. Returns (rc, all output).
    `env`: variables to set (a value of None unsets one) in lldb's environment."""
    argv = ["lldb-19", "-b", "--no-lldbinit", "-o", f"plugin load {LLDB_PLUGIN}"]
    for c in commands:
        argv += ["-o", c]
    if program:
        argv += ["--", program, *args]
    environment = None
    if env:
        environment = {k: v for k, v in os.environ.items() if k not in env}
        environment.update({k: v for k, v in env.items() if v is not None})
    return run(argv, timeout, environment)


def gdb(commands, program=None, args=(), timeout=TIMEOUT, binary="gdb"):
    """Runs gdb -batch with strobe sourced, then `commands` in order. Returns (rc, all output)."""
    argv = [binary, "-nx", "-batch", "-ex", f"source {GDB_SCRIPT}"]
    for c in commands:
        argv += ["-ex", c]
    if program:
        argv += ["--args", program, *args]
    return run(argv, timeout)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Background:
    """A fixture process started outside the debugger (for attach and remote tests)."""

    def __init__(self, argv):
        # Output goes nowhere: an unread pipe fills up and blocks the program (gdbserver prints
        # a line at every stop).
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        time.sleep(0.3)

    @property
    def pid(self):
        return self.proc.pid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


def ended(output):
    """(how the capture ended, samples kept) from the engine's closing line."""
    m = re.search(r"sampling ended: (.+?); (\d+) samples? of (\d+) threads?", output)
    if not m:
        raise AssertionError(f"no end-of-capture line in:\n{output}")
    return m.group(1), int(m.group(2))


def function_percentages(report):
    """Parses `strobe profile --by function` rows into {function: percent}."""
    result = {}
    for line in report.splitlines():
        m = re.match(r"\s*(\d+)\s+([\d.]+)%\s+.*?\s(\S+)\s*$", line)
        if m:
            result.setdefault(m.group(3), float(m.group(2)))
    return result


def check_annotate_after_an_early_exit(test, debugger):
    """`strobe annotate compute_sixty` after a run shorter than strobe's once-a-second
    symbolizing: the process is gone before the capture has read the code of what it sampled,
    so the debugger (`harness.gdb` or `harness.lldb`) must find it in the executable."""
    rc, out = debugger(["b main", "run", "strobe record --frequency 1000 --overhead 100",
                        "strobe annotate compute_sixty"], fixture("demo"), ["0.3"])
    test.assertEqual(rc, 0, out)
    test.assertEqual(ended(out)[0], "the process exited with status 0", out)
    test.assertNotIn("no machine code", out)
    test.assertRegex(out, r"strobe annotate: compute_sixty at 0x[0-9a-f]+ \(demo\), [1-9]")
    # samples on at least one instruction of the loop
    test.assertRegex(out, r"\n\s+[1-9]\d*\s+[\d.]+%\s+0x[0-9a-f]+\s+(add|cmp|jne|mov|imul)\b")


def assert_parked_thread_off_cpu(test, wall, cpu):
    """The threads fixture's parked thread sits in read() throughout: every wall-clock report
    has it, and an on-CPU report (`strobe profile --cpu`) has it at most once in a while, since
    the stops themselves charge it some kernel time."""
    def read_share(report):
        shares = function_percentages(report)
        return sum(p for f, p in shares.items() if re.search(r"(^|_)read$", f))
    test.assertGreater(read_share(wall), 0.0, wall)
    test.assertLessEqual(read_share(cpu), 1.0, cpu)


DEMO_SHARES = {"compute_sixty": 60.0, "compute_thirty": 30.0, "compute_ten": 10.0}
# The accuracy checks' sample count. The spec asks for ±3 points from 2000 samples or more; at
# 2000 that is 2.7 standard deviations of compute_sixty's 60 %, which chance alone misses about
# once in 160 runs. At 4000 it is 3.9 (once in 9000), for 2 s more per debugger.
ACCURACY_SAMPLES = 4000


def assert_demo_shares(test, report, points=3.0):
    """The demo's three functions take 60 / 30 / 10 % of the CPU by construction. Tests on
    captures whose sample count depends on the machine's load allow more points: a preempted
    program makes neighbouring samples land close together, widening the spread past what the
    count alone predicts."""
    shares = function_percentages(report)
    for function, expected in DEMO_SHARES.items():
        test.assertIn(function, shares, report)
        test.assertAlmostEqual(shares[function], expected, delta=points, msg=report)


def routine_stops(test, status):
    """(stops, of them taken before the debugger handled them) from `strobe status`."""
    m = re.search(r"(\d+) stops over .* (\d+) of them on the fast path "
                  r"\(read and resumed before the debugger handled the stop\)", status)
    test.assertIsNotNone(m, status)
    return int(m.group(1)), int(m.group(2))


# `calls` calling leaf() at the bottom of four descend() frames, for ever.
CALLS_FOR_EVER = ["1000000000", "4"]
STACK_CAPTURE = "strobe record --samples 300 --stack 12 --frequency 1000 --overhead 100"
STACK_REPORT = "strobe profile --callers --top 20"


def assert_calls_stacks(test, report):
    """STACK_REPORT of a STACK_CAPTURE of `calls` CALLS_FOR_EVER: deep stacks reach the callers
    (through libc and libstdc++), and a caller's line is its call's, not the line after it."""
    inclusive = {}
    for line in report.splitlines():
        m = re.match(r"\s*\d+\s+[\d.]+%\s+±[\d.]+\s+\S+ \S+\s+([\d.]+)%\s+\S+\s+(.+?)\s*$", line)
        if m:
            inclusive.setdefault(m.group(2), float(m.group(1)))
    # Only calls() and main() run outside descend(), a few instructions per leaf() call.
    test.assertGreaterEqual(inclusive.get("descend(int, int)", 0), 95.0, report)
    test.assertGreaterEqual(inclusive.get("leaf(int)", 0), 50.0, report)
    # leaf() calls on lines 13 (new) and 15 (delete); line 16 follows the second call.
    call_lines = re.findall(r"<-\s+[\d.]+% leaf\(int\) \(calls\.cpp:(\d+)\)", report)
    test.assertTrue(call_lines, report)
    test.assertLessEqual(set(call_lines), {"13", "15"}, report)


def _assert_calls_stack_counts(test, stacks, shown):
    """Stacks of a STACK_CAPTURE of `calls` as (function names, the sampled one first, None where
    a frame has none; samples), whichever file they were read from; `shown` on a failure."""
    total = sum(n for _, n in stacks)
    test.assertEqual(total, 300, shown)  # STACK_CAPTURE's samples of its one thread
    reach_main = in_descend = 0
    for names, n in stacks:
        mains = [i for i, f in enumerate(names) if f and (f == "main" or f.startswith("main("))]
        descends = [i for i, f in enumerate(names) if f == "descend(int, int)"]
        if mains:
            reach_main += n
            # main calls descend: it stands further from the sampled function, never nearer.
            test.assertTrue(all(d < mains[-1] for d in descends), names)
        if descends:
            in_descend += n
        if "leaf(int)" in names:
            test.assertEqual(names[names.index("leaf(int)") + 1], "descend(int, int)", names)
    test.assertGreaterEqual(in_descend, 0.95 * total, shown)
    # Twelve frames reach main from all but operator new's and free's deepest helpers.
    test.assertGreaterEqual(reach_main, 0.5 * total, shown)


def assert_calls_folded(test, path, report):
    """The --folded file of a STACK_CAPTURE of `calls`: one 'frame;...;frame count' line per
    stack, outermost first, counts adding up to the capture's samples."""
    test.assertIn(f"to {path}", report)
    with open(path) as f:
        lines = f.read().splitlines()
    stacks = []
    for line in lines:
        m = re.fullmatch(r"(\S.*) (\d+)", line)
        test.assertIsNotNone(m, line)
        stacks.append((m.group(1).split(";")[::-1], int(m.group(2))))
    _assert_calls_stack_counts(test, stacks, lines)


def _varint(data, i):
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def protobuf_fields(data):
    """(number, value) of each field of one protobuf message, from the wire format's public
    description: an int for a varint, bytes for a length-delimited field or a fixed one."""
    fields, i = [], 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i:i + size], i + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, i = data[i:i + size], i + size
        else:
            raise ValueError(f"wire type {wire} at byte {i}")
        fields.append((number, value))
    return fields


def _repeated_varints(values):
    """A repeated integer field, packed (bytes) or not (ints)."""
    out = []
    for value in values:
        if isinstance(value, int):
            out.append(value)
            continue
        i = 0
        while i < len(value):
            number, i = _varint(value, i)
            out.append(number)
    return out


def read_pprof(path):
    """A gzipped pprof profile, read with the field numbers of pprof's published profile.proto:
    its samples as (function names, the sampled one first; values), and its period."""
    with gzip.open(path) as f:
        top = protobuf_fields(f.read())
    strings = [value.decode() for number, value in top if number == 6]
    functions = {}
    for number, value in top:
        if number == 5:  # Function: id 1, name 2
            fields = dict(protobuf_fields(value))
            functions[fields.get(1, 0)] = strings[fields.get(2, 0)]
    locations = {}
    for number, value in top:
        if number == 4:  # Location: id 1, line 4 (Line: function_id 1)
            fields = protobuf_fields(value)
            lines = [dict(protobuf_fields(v)) for n, v in fields if n == 4]
            locations[dict(fields)[1]] = functions[lines[0][1]] if lines else None
    samples = []
    for number, value in top:
        if number == 2:  # Sample: location_id 1, value 2
            fields = protobuf_fields(value)
            ids = _repeated_varints([v for n, v in fields if n == 1])
            values = _repeated_varints([v for n, v in fields if n == 2])
            samples.append(([locations[i] for i in ids], values))
    period = next((value for number, value in top if number == 12), 0)
    return samples, period


def assert_calls_pprof(test, path, report):
    """The --pprof file of a STACK_CAPTURE of `calls`: the same stacks as assert_calls_folded
    checks, the sampled function first, each with its count and the time it stands for."""
    test.assertIn(f"wrote a pprof profile of 300 samples to {path}", report)
    samples, period = read_pprof(path)
    test.assertGreater(period, 0)
    for names, values in samples:
        test.assertEqual(values[1], values[0] * period, names)
    _assert_calls_stack_counts(test, [(names, values[0]) for names, values in samples], samples)


def check_calls_stacks(test, debugger, stop_in_leaf):
    """A STACK_CAPTURE of `calls` CALLS_FOR_EVER in `debugger` (lldb or gdb), begun after the
    commands `stop_in_leaf` (stop in leaf(), delete the breakpoint); its table, folded stacks and
    pprof profile checked."""
    with tempfile.TemporaryDirectory() as tmp:
        folded = os.path.join(tmp, "calls.folded")
        pprof = os.path.join(tmp, "calls.pb.gz")
        rc, out = debugger(stop_in_leaf + [STACK_CAPTURE, STACK_REPORT,
                                           f"strobe profile --folded --output {folded}",
                                           f"strobe profile --pprof --output {pprof}"],
                           fixture("calls"), CALLS_FOR_EVER)
        test.assertEqual(rc, 0, out)
        assert_calls_stacks(test, out)
        assert_calls_folded(test, folded, out)
        assert_calls_pprof(test, pprof, out)


def require_built(*paths):
    """Skips the test when a debugger's front-end (LLDB_PLUGIN, GDB_SCRIPT) was not built."""
    for path in (*paths, FIXTURES):
        if not path or not os.path.exists(path):
            raise unittest.SkipTest(f"not built: {path!r}")


def require_avx():
    """Skips the test on a CPU without AVX, where the vector fixture has no `mix` to run."""
    with open("/proc/cpuinfo") as f:
        if not re.search(r"^flags\s*:.* avx( |$)", f.read(), re.M):
            raise unittest.SkipTest("this CPU has no AVX")


@functools.cache
def hardware_watchpoints_fire():
    """Whether a hardware watchpoint fires on this machine: some VMs give a guest no debug
    registers that work, and then GDB's and LLDB's hardware watchpoints never trigger."""
    rc, out = run(["gdb", "-nx", "-batch", "-ex", "watch iteration", "-ex", "run", "--args",
                   fixture("loop_helper"), "1", "0"])
    return "Hardware watchpoint 1: iteration\n\nOld value" in out


def gdb_python(script, program, args=(), before=(), after=(), timeout=TIMEOUT):
    """Runs gdb -batch with strobe sourced: `before` commands, then the Python `script` (sourced
    from a file, so it may span lines and define functions), then `after`. Returns (rc, output)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
    try:
        return gdb([*before, f"source {f.name}", *after], program, args, timeout)
    finally:
        os.unlink(f.name)


def run_merged(argv):
    """Like run, with stderr merged into stdout as written, so that an error message stays
    between the markers of the command that printed it."""
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as timeout:
        # What the session printed before it hung says where it hung.
        printed = timeout.output or b""
        if isinstance(printed, bytes):
            printed = printed.decode(errors="replace")
        raise AssertionError(f"timed out after {TIMEOUT} s; the session printed:\n{printed}")
    return proc.returncode, proc.stdout


class LldbSession:
    """One lldb-19 batch session, for scenarios written once for both debuggers."""
    name = "lldb"
    plugin = LLDB_PLUGIN
    kill = "process kill"
    attach = staticmethod(lambda pid: f"process attach -p {pid}")
    prompt = "(lldb) "
    interactive = staticmethod(lambda: ["lldb-19", "--no-lldbinit", "-o",
                                        f"plugin load {LLDB_PLUGIN}", "--"])

    @staticmethod
    def session(commands, program=None, args=()):
        # `command source -e false`: a failing command (the bad-input cases) does not end the
        # batch, as a failing -o command would.
        with tempfile.NamedTemporaryFile("w", suffix=".lldb", delete=False) as script:
            script.write("\n".join(commands) + "\n")
        try:
            argv = ["lldb-19", "-b", "--no-lldbinit", "-o", f"plugin load {LLDB_PLUGIN}",
                    "-o", f"command source -e false {script.name}"]
            if program:
                argv += ["--", program, *args]
            return run_merged(argv)
        finally:
            os.unlink(script.name)

    @staticmethod
    def mark(name):
        return f"script print('@@{name}')"

    @staticmethod
    def print_variable(name):
        return (f"script print('{name} =', "
                f"lldb.target.FindFirstGlobalVariable('{name}').GetValueAsUnsigned())")


class GdbSession:
    """One gdb batch session, for scenarios written once for both debuggers."""
    name = "gdb"
    plugin = GDB_SCRIPT
    kill = "kill"
    attach = staticmethod(lambda pid: f"attach {pid}")
    prompt = "(gdb) "
    interactive = staticmethod(lambda: ["gdb", "-nx", "-q", "-iex", "set pagination off",
                                        "-ex", f"source {GDB_SCRIPT}", "--args"])

    @staticmethod
    def session(commands, program=None, args=()):
        # gdb -batch goes on after a failing command.
        argv = ["gdb", "-nx", "-batch", "-ex", f"source {GDB_SCRIPT}"]
        for c in commands:
            argv += ["-ex", c]
        if program:
            argv += ["--args", program, *args]
        return run_merged(argv)

    @staticmethod
    def mark(name):
        return f"echo @@{name}\\n"

    @staticmethod
    def print_variable(name):
        return f"python print('{name} =', int(gdb.parse_and_eval('{name}')))"


class Terminal:
    """A debugger (LldbSession, GdbSession) run interactively on a pseudo-terminal, as by a
    user at a keyboard: interrupt() is Ctrl-C typed there, which the terminal turns into SIGINT
    for whoever has it."""

    def __init__(self, debugger, program, args=()):
        self.debugger = debugger
        argv = debugger.interactive() + [program, *args]
        env = dict(os.environ, TERM="dumb")  # no colours or escape sequences in the output
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.output = ""  # everything printed so far
        self.seen = 0     # where the next expect() looks from

    def type(self, line):
        os.write(self.fd, (line + "\n").encode())

    def command(self, line, timeout=60):
        """Types `line` once the debugger waits at its prompt: LLDB hands what is typed while the
        program runs to the program."""
        deadline = time.monotonic() + timeout
        while not self.output.endswith(self.debugger.prompt):
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"no prompt within {timeout} s for {line!r}; the session "
                                     f"printed:\n{self.output}")
        self.type(line)

    def interrupt(self):
        os.write(self.fd, b"\x03")

    def expect(self, pattern, timeout=60):
        """The match of `pattern` in what is printed after the previous match."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.compile(pattern).search(self.output, self.seen)
            if found:
                self.seen = found.end()
                return found
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{pattern!r} not printed within {timeout} s; the session "
                                     f"printed:\n{self.output}")

    def pause(self, seconds):
        """Lets the session run, reading what it prints."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._read(deadline - time.monotonic()):
            pass

    def _read(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], min(timeout, 1.0))
        if ready:
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # the debugger exited
                return False
            self.output += data.decode(errors="replace").replace("\r\n", "\n")
        return True

    def kill(self):
        """The debugger dies at once, as when its window is closed (SIGKILL)."""
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self.pid = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.pid is None:  # killed: the inferior goes with its debugger (or its lldb-server)
            os.close(self.fd)
            return
        # Killed by its debugger, the inferior cannot outlive the test.
        for line in (self.debugger.kill, "quit"):
            self.type(line)
            self.pause(1)
        if os.waitpid(self.pid, os.WNOHANG) == (0, 0):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def marked_session(debugger, steps, program=None, args=()):
    """Runs `steps` in one session of `debugger` (LldbSession, GdbSession): commands, or (marker,
    command...) tuples; a command may be several lines. Returns (whole output, {marker: output
    after it, up to the next marker}); the last marker is "end"."""
    commands = []
    for step in steps:
        name, *lines = step if isinstance(step, tuple) else (None, step)
        if name is not None:
            commands.append(debugger.mark(name))
        for line in lines:
            commands += line.split("\n")
    commands.append(debugger.mark("end"))
    _, out = debugger.session(commands, program, args)
    parts = re.split(r"^@@(.+)$", out, flags=re.MULTILINE)
    return out, dict(zip(parts[1::2], parts[2::2]))


class MarkedScenarios:
    """Scenarios written once for both debuggers; a subclass sets `debugger` (LldbSession,
    GdbSession) and mixes in unittest.TestCase."""
    debugger = None

    def marked(self, steps, program=None, args=()):
        out, sections = marked_session(self.debugger, steps, program, args)
        self.assertIn("end", sections, out)
        return out, sections

    def json_of(self, section, out):
        """The JSON document a command printed in `section` (one line starting with '{')."""
        for line in section.splitlines():
            if line.startswith("{"):
                return json.loads(line)
        self.fail(f"no JSON document in:\n{section}\n--- whole output:\n{out}")
