#!/usr/bin/python3
"""strobe's sampling benchmark: cost per sample and inferior slowdown in LLDB and GDB, side by side
in one run with a raw-ptrace baseline and with `perf record`, on the same fixtures.

    bench/run.py [--build build] [--rounds N]

Prints a Markdown report (paste it into bench/RESULTS.md with the command line)."""
import argparse
import re
import subprocess
import sys
import tempfile

from benchlib import DEFAULT_BUILD, Build, session, sh

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--build", default=DEFAULT_BUILD)
ap.add_argument("--rounds", type=int, default=150000, help="demo work per run (about 3 s here)")
ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (the median is kept)")
args = ap.parse_args()
build = Build(args.build)
demo = build.example("demo")
threads = build.example("threads")
ptrace_tool = build.tool("ptrace_sample")
FUNCTIONS = ("compute_sixty", "compute_thirty", "compute_ten")


def demo_seconds(text):
    m = re.search(r"demo: \d+ rounds in ([\d.]+) s", text)
    if not m:
        sys.exit("benchmark run failed:\n" + text[-3000:])
    return float(m.group(1))


def stops_of(text):
    m = re.search(r"(\d+) stops", text)
    return int(m.group(1)) if m else 0


def strobe_commands(frequency, extra=()):
    return [f"strobe record --frequency {frequency}", "strobe status", *extra]


def run_gdb(program_args, commands):
    return session(build, "gdb", ["break main", "run", "delete", *commands], program_args, 180)


def run_lldb(program_args, commands):
    return session(build, "lldb", ["breakpoint set -n main", "run", "breakpoint delete 1", *commands],
                   program_args, 180)


def run_ptrace(program_args, frequency):
    proc = subprocess.Popen(program_args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tool = sh([ptrace_tool, str(proc.pid), str(frequency)])
    out = proc.communicate()[0]
    m = re.search(r"(\d+) samples of \d+ threads, ([\d.]+) us", tool)
    return out, int(m.group(1)) if m else 0, float(m.group(2)) if m else 0.0


def median_run(fn):
    runs = [fn() for _ in range(args.repeat)]
    runs.sort(key=lambda r: r[0])
    return runs[len(runs) // 2]


def function_shares(text):
    shares = {}
    for f in FUNCTIONS:
        m = re.search(r"([\d.]+)%\s+±[\d.]+\s+\S+ \S+\s+.*\b" + f + r"\b", text)
        if m:
            shares[f] = float(m.group(1))
    return shares


demo_args = [demo, "0", str(args.rounds)]
base = median_run(lambda: (demo_seconds(sh(demo_args)),))[0]
print(f"# strobe sampling benchmark\n\nfixture: `examples/demo 0 {args.rounds}` (single thread), "
      f"median of {args.repeat} runs; baseline run time {base:.3f} s\n")

rows = []
for hz in (100, 1000):
    t, samples, tracer_us = median_run(lambda: (lambda o, n, u: (demo_seconds(o), n, u))(
        *run_ptrace(demo_args, hz)))
    rows.append(("raw ptrace (bench/ptrace_sample)", hz, t, samples, tracer_us))
    for name, runner in (("GDB + strobe", run_gdb), ("LLDB + strobe", run_lldb)):
        def once():
            out = runner(demo_args, strobe_commands(hz))
            return demo_seconds(out), stops_of(out), 0.0
        t, stops, _ = median_run(once)
        rows.append((name, hz, t, stops, 0.0))
    with tempfile.TemporaryDirectory() as tmp:
        data = f"{tmp}/perf.data"
        def perf_once():
            out = sh(["perf", "record", "-e", "cpu-clock", "-F", str(hz), "-g", "-o", data, "--",
                      *demo_args])
            m = re.search(r"\(([\d]+) samples\)", out)
            return demo_seconds(out), int(m.group(1)) if m else 0, 0.0
        t, samples, _ = median_run(perf_once)
        rows.append(("perf record -F (no stops)", hz, t, samples, 0.0))

print("| sampler | Hz | run time (s) | slowdown | stops | cost per stop (µs, from slowdown) | "
      "tracer-side µs |")
print("|---|---|---|---|---|---|---|")
for name, hz, t, stops, tracer in rows:
    cost = (t - base) / stops * 1e6 if stops else float("nan")
    print(f"| {name} | {hz} | {t:.3f} | {100 * (t - base) / base:+.1f} % | {stops} | {cost:.0f} | "
          f"{tracer:.1f} |" if tracer else
          f"| {name} | {hz} | {t:.3f} | {100 * (t - base) / base:+.1f} % | {stops} | {cost:.0f} | – |")

# 8 busy threads: the cost of one stop of all threads, from the rate strobe reaches when asked for
# far more stops than it can take. One signal is in flight at a time, and --overhead 1000 lets
# the inferior run only a tenth of a stop's time (times 1.5, for the cost strobe does not see)
# between stops, so a cycle from one signal to the next is 1.15 stops.
print("\n## 8 busy threads (`examples/threads 3 8`), saturated at 5000 Hz requested\n")
print("| sampler | stops in 3 s | µs per stop (all threads) |")
print("|---|---|---|")
thr_args = [threads, "3", "8"]
out, n, us = run_ptrace(thr_args, 5000)
print(f"| raw ptrace | {n} | {us:.0f} (tracer side) |")
for name, runner in (("GDB + strobe", run_gdb), ("LLDB + strobe", run_lldb)):
    out = runner(thr_args, ["strobe record --frequency 5000 --overhead 1000 --duration 2",
                            "strobe status"])
    stops = stops_of(out)
    m = re.search(r"over ([\d.]+) s", out)
    dur = float(m.group(1)) if m else 2.0
    print(f"| {name} | {stops} | {dur / stops * 1e6 / 1.15:.0f} |" if stops else f"| {name} | 0 | – |")

# Per-function agreement at 1000 Hz with a longer run (>= 2000 samples).
print("\n## Per-function shares (wall-clock, 1000 Hz, 3 s) against perf\n")
long_args = [demo, "3"]
with tempfile.TemporaryDirectory() as tmp:
    data = f"{tmp}/perf.data"
    sh(["perf", "record", "-e", "cpu-clock", "-F", "1000", "-g", "-o", data, "--", *long_args])
    report = sh(["perf", "report", "-i", data, "--stdio", "--children", "--sort", "symbol"])
    perf = {}
    for f in FUNCTIONS:
        m = re.search(r"^\s+([\d.]+)%\s+[\d.]+%.*\b" + f + r"\b", report, re.M)
        if m:
            perf[f] = float(m.group(1))
g = function_shares(run_gdb(long_args, ["strobe record --frequency 1000", "strobe profile --by function --callers"]))
lldb = function_shares(run_lldb(long_args, ["strobe record --frequency 1000", "strobe profile --by function --callers"]))
print("| function | by construction | perf (children %) | GDB + strobe | LLDB + strobe |")
print("|---|---|---|---|---|")
for f, truth in zip(FUNCTIONS, (60, 30, 10)):
    print(f"| {f} | {truth} % | {perf.get(f, float('nan')):.1f} % | {g.get(f, float('nan')):.1f} % | "
          f"{lldb.get(f, float('nan')):.1f} % |")
