"""What the benchmarks share: where a build keeps strobe's pieces, running a command that may hang,
one debugger session in batch mode with strobe loaded, and medians that skip missing values."""
import os
import statistics
import subprocess
import time

DEFAULT_BUILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build")


class Build:
    """The paths of a build directory's products."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.plugin = f"{self.root}/lldb-plugin/libstrobe_lldb.so"
        self.gdb_script = f"{self.root}/gdb-ext/strobe.py"
        self.strobe_report = f"{self.root}/tools/strobe-report"
        self.lldb_server_launcher = f"{self.root}/lldb-plugin/strobe-lldb-server"

    def example(self, name):
        return f"{self.root}/examples/{name}"

    def tool(self, name):
        return f"{self.root}/bench/{name}"


def sh(argv, timeout=600):
    """Runs a command, its stderr merged into its stdout. A run that hangs is killed, and what it
    printed comes back with a line that says so: a benchmark reports a hang, it does not stop."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        return p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
        return f"{out or ''}\n(killed after {timeout} s: hung)\n"


def timed(argv, timeout=600):
    """(wall seconds, output) of sh(argv)."""
    start = time.perf_counter()
    out = sh(argv, timeout)
    return time.perf_counter() - start, out


def session_argv(build, debugger, commands, program_args):
    """The command line of `gdb -batch` or `lldb-19 -b` with strobe loaded, running `commands` in
    order on program_args. debugger: "gdb" or "lldb"."""
    if debugger == "gdb":
        argv = ["gdb", "-nx", "-batch", "-ex", f"source {build.gdb_script}"]
        for c in commands:
            argv += ["-ex", c]
        return argv + ["--args", *program_args]
    argv = ["lldb-19", "-b", "--no-lldbinit", "-o", f"plugin load {build.plugin}"]
    for c in commands:
        argv += ["-o", c]
    return argv + ["--", *program_args]


def session(build, debugger, commands, program_args, timeout=600):
    """The output of session_argv()'s session."""
    return sh(session_argv(build, debugger, commands, program_args), timeout)


def median(values):
    """The median of the values that are not None; None when there are none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
