#!/usr/bin/python3
"""Exact instruction traces through a debug server on this host, one run, side by side,
microseconds an instruction:

  - `strobe step --count N --quiet` in GDB, stepping with gdbserver's packets (its default);
  - the same with the packets' way turned off: each step GDB's own `stepi` (strobe before it);
  - `strobe step` in LLDB (`gdb-remote`), to an lldb-server started through strobe's launcher
    (strobe's library inside it steps), and to a plain lldb-server (each step LLDB's own);
  - GDB's `record full`, then `stepi N`, timed inside GDB (the anchor);

each on a fresh server running the step-loop fixture (examples/steploop_int), stopped at its
loop, `--rounds` times in turn; with and without `--memory` for strobe in GDB.

    bench/remote_step.py [--build build] [--steps N] [--rounds R]

Prints Markdown (bench/RESULTS.md, "`strobe step` through gdbserver with its own packets")."""
import argparse
import re
import socket
import subprocess
import time

from benchlib import DEFAULT_BUILD, Build, median, session

ap = argparse.ArgumentParser(description=__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--build", default=DEFAULT_BUILD)
ap.add_argument("--steps", type=int, default=1000, help="instructions a trace steps")
ap.add_argument("--rounds", type=int, default=3, help="runs of each way, alternating")
args = ap.parse_args()
build = Build(args.build)
program = build.example("steploop_int")
NO_PACKETS = ("python import strobe_gdb.target; "
              "strobe_gdb.target.GdbTarget.remote_layout = lambda self: None")
TIMED_STEPS = ("python import time; t = time.perf_counter(); "
               f"gdb.execute('stepi {args.steps}', to_string=True); "
               "print('@@us', (time.perf_counter() - t) * 1e6 / " f"{args.steps})")


def remote(commands, debugger="gdb", server=("gdbserver",)):
    """The output of a session of `debugger` with strobe loaded, connected to a new `server`
    (its command line before the address; an lldb-server's takes `--` before the program)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    separator = ["--"] if debugger == "lldb" else []
    server = subprocess.Popen([*server, f"127.0.0.1:{port}", *separator, program, "1000000000"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    connect = ([f"target remote 127.0.0.1:{port}"] if debugger == "gdb"
               else [f"target create {program}", f"gdb-remote 127.0.0.1:{port}"])
    try:
        time.sleep(0.3)
        return session(build, debugger, [*connect, "b step_work", "continue", *commands,
                                         "kill" if debugger == "gdb" else "process kill"],
                       [program] if debugger == "gdb" else [])
    finally:
        server.kill()
        server.wait()


def strobe_us(setup, memory, debugger="gdb", server=("gdbserver",)):
    out = remote([*setup, f"strobe step --count {args.steps}{' --memory' * memory} --quiet"],
                 debugger, server)
    each = re.search(rf"strobe: stepped {args.steps} instructions .*\((\d+) us each\)", out)
    return int(each.group(1)) if each else None


def record_full_us():
    out = remote(["record full", TIMED_STEPS])
    each = re.search(r"^@@us ([\d.]+)$", out, re.M)
    return float(each.group(1)) if each else None


ways = {"GDB + strobe, gdbserver's packets": lambda: strobe_us([], False),
        "GDB + strobe, gdbserver's packets, --memory": lambda: strobe_us([], True),
        "GDB + strobe, GDB's stepi (packets off)": lambda: strobe_us([NO_PACKETS], False),
        "GDB + strobe, GDB's stepi (packets off), --memory": lambda: strobe_us([NO_PACKETS], True),
        "LLDB + strobe, lldb-server through strobe's launcher":
            lambda: strobe_us([], False, "lldb", (build.lldb_server_launcher, "gdbserver")),
        "LLDB + strobe, plain lldb-server":
            lambda: strobe_us([], False, "lldb", ("/usr/lib/llvm-19/bin/lldb-server", "gdbserver")),
        "GDB `record full`, `stepi N`": record_full_us}
runs = {name: [] for name in ways}
for _ in range(args.rounds):
    for name, way in ways.items():
        runs[name].append(way())
anchor = median(runs["GDB `record full`, `stepi N`"])
print(f"Command: `bench/remote_step.py --build {args.build} --steps {args.steps} "
      f"--rounds {args.rounds}`\n")
print("| way | us an instruction, each run | median | / record full |")
print("|---|---|---|---|")
for name, values in runs.items():
    m = median(values)
    shown = ", ".join("failed" if v is None else f"{v:.0f}" for v in values)
    ratio = f"{m / anchor:.2f}" if m and anchor else "-"
    print(f"| {name} | {shown} | {m:.0f} | {ratio} |" if m else f"| {name} | {shown} | - | - |")
