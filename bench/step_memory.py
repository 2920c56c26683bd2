#!/usr/bin/python3
"""What an exact instruction trace costs the debugger's memory, one run, side by side:

  - `strobe step --count N --quiet`, then `strobe save`, in GDB and in LLDB, on the step-loop
    fixture (examples/steploop_int), against the same session stopped at the same place without
    stepping: the growth of the debugger's peak resident set, per instruction;
  - GDB's own `record full` over the same N instructions (`stepi N`), against `stepi 1`.

    bench/step_memory.py [--build build [--build other-build ...]] [--steps N]

Several --build: each build's strobe in turn (to compare a change with the build before it).
Peak resident sets come from wait4() on the debugger, as /usr/bin/time reports them. Prints
Markdown (bench/RESULTS.md, "Step traces in the debugger's memory", records a run)."""
import argparse
import os
import re
import subprocess
import tempfile
import time

from benchlib import DEFAULT_BUILD, Build, session_argv

ap = argparse.ArgumentParser(description=__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--build", action="append", help="a build directory (repeatable)")
ap.add_argument("--steps", type=int, default=100000, help="instructions to trace")
args = ap.parse_args()
builds = [Build(b) for b in (args.build or [DEFAULT_BUILD])]
program = [builds[0].example("steploop_int"), "1000000000"]


def peak_kb(argv):
    """(peak resident set of the command in kB, its output)."""
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return usage.ru_maxrss, out.read()


def strobe_row(build, debugger, trace_file):
    stop = ["break step_work" if debugger == "gdb" else "b step_work", "run"]
    base, _ = peak_kb(session_argv(build, debugger, stop, program))
    peak, out = peak_kb(session_argv(build, debugger, stop + [
        f"strobe step --count {args.steps} --quiet", f"strobe save {trace_file}"], program))
    each = re.search(r"strobe: stepped (\d+) instructions .*\((\d+) us each\)", out)
    if not each or int(each.group(1)) != args.steps:
        return f"| {debugger} + strobe ({build.root}) | did not step: {out[-300:]!r} |"
    stored = os.path.getsize(trace_file) / args.steps
    return (f"| {debugger} + strobe ({build.root}) | {base} | {peak} | {peak - base} | "
            f"{(peak - base) * 1024 / args.steps:.0f} | {stored:.2f} | {each.group(2)} |")


def record_full_row():
    def run(steps):
        return peak_kb(["gdb", "-nx", "-batch", "-ex", "break step_work", "-ex", "run",
                        "-ex", "record full", "-ex", "set record full insn-number-max unlimited",
                        "-ex", f"stepi {steps}", "-ex", "info record", "--args", *program])
    start = time.perf_counter()
    base, _ = run(1)
    middle = time.perf_counter()
    peak, out = run(args.steps)
    # Wall time per instruction, less a session that stepped one.
    each = ((time.perf_counter() - middle) - (middle - start)) * 1e6 / args.steps
    logged = re.search(r"Log contains (\d+) instructions", out)
    if not logged or int(logged.group(1)) != args.steps:
        return f"| gdb record full | did not record: {out[-300:]!r} |"
    return f"| gdb record full | {base} | {peak} | {peak - base} | " \
           f"{(peak - base) * 1024 / args.steps:.0f} | (nothing saved) | {each:.0f} |"


print(f"Command: `bench/step_memory.py {' '.join(f'--build {b.root}' for b in builds)} "
      f"--steps {args.steps}`\n")
print(f"{args.steps} instructions of `steploop_int`'s loop; peak resident set of the debugger "
      "(kB), stopped at the loop's function and after tracing it:\n")
print("| tracer | stopped | after the trace | growth (kB) | bytes per instruction | trace file "
      "(bytes per instruction) | µs per instruction |")
print("|---|---|---|---|---|---|---|")
with tempfile.TemporaryDirectory(prefix="step-memory-") as tmp:
    for build in builds:
        for debugger in ("gdb", "lldb"):
            print(strobe_row(build, debugger, f"{tmp}/trace.strobe"), flush=True)
print(record_full_row())
