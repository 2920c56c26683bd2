"""Runs the real lldb-19 and gdb in batch mode with strobe loaded, for the integration tests.

ctest passes the build's paths in the environment (see tests/CMakeLists.txt)."""
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import unittest

BUILD = os.environ.get("STROBE_BUILD_DIR", "")
LLDB_PLUGIN = os.environ.get("STROBE_LLDB_PLUGIN", "")
GDB_SCRIPT = os.environ.get("STROBE_GDB_SCRIPT", "")
FIXTURES = os.environ.get("STROBE_FIXTURES", "")
STROBE_REPORT = os.environ.get("STROBE_REPORT", "")
TIMEOUT = 240


def fixture(name):
    return os.path.join(FIXTURES, name)


def run(argv, timeout=TIMEOUT, env=None):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout + proc.stderr


def lldb(commands, program=None, args=(), timeout=TIMEOUT):
    """Runs lldb-19 -b with strobe loaded, then `commands` in order. Returns (rc, all output)."""
    argv = ["lldb-19", "-b", "--no-lldbinit", "-o", f"plugin load {LLDB_PLUGIN}"]
    for c in commands:
        argv += ["-o", c]
    if program:
        argv += ["--", program, *args]
    return run(argv, timeout)


def gdb(commands, program=None, args=(), timeout=TIMEOUT):
    """Runs gdb -batch with strobe sourced, then `commands` in order. Returns (rc, all output)."""
    argv = ["gdb", "-nx", "-batch", "-ex", f"source {GDB_SCRIPT}"]
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
    m = re.search(r"sampling ended: (.+?); (\d+) samples of (\d+) threads?", output)
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


DEMO_SHARES = {"compute_sixty": 60.0, "compute_thirty": 30.0, "compute_ten": 10.0}


def assert_demo_shares(test, report, points=3.0):
    """The demo's three functions take 60 / 30 / 10 % of the CPU by construction. Tests on
    captures whose sample count depends on the machine's load allow more points: a preempted
    program makes neighbouring samples land close together, widening the spread past what the
    count alone predicts."""
    shares = function_percentages(report)
    for function, expected in DEMO_SHARES.items():
        test.assertIn(function, shares, report)
        test.assertAlmostEqual(shares[function], expected, delta=points, msg=report)


def require_built(*paths):
    """Skips the test when a debugger's front-end (LLDB_PLUGIN, GDB_SCRIPT) was not built."""
    for path in (*paths, FIXTURES):
        if not path or not os.path.exists(path):
            raise unittest.SkipTest(f"not built: {path!r}")


def gdb_python(script, program, args=(), before=(), after=(), timeout=TIMEOUT):
    """Runs gdb -batch with strobe sourced: `before` commands, then the Python `script` (sourced
    from a file, so it may span lines and define functions), then `after`. Returns (rc, output)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
    try:
        return gdb([*before, f"source {f.name}", *after], program, args, timeout)
    finally:
        os.unlink(f.name)
