#!/usr/bin/python3
"""strobe's sampling benchmark: cost per sample and inferior slowdown in LLDB and GDB, side by side
in one run with a raw-ptrace baseline and with `perf record`, on the same fixtures. Each stop's cost
is read two ways: from the program's slowdown (everything a stop costs it, after-effects included),
and as the time the stop holds it, traced stop to resume, from kernel events (bench/stop_hold.py).

    bench/run.py [--build build] [--rounds N] [--repeat N] [--hz 100,1000]
                 [--sections slowdown,held,threads,shares]

Prints a Markdown report (paste it into bench/RESULTS.md with the command line)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from benchlib import DEFAULT_BUILD, Build, session, sh
from stop_hold import SchedTrace

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--build", default=DEFAULT_BUILD)
ap.add_argument("--rounds", type=int, default=150000, help="demo work per run (about 3 s here)")
ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (the median is kept)")
ap.add_argument("--hz", default="100,1000", help="sampling rates of the slowdown table")
ap.add_argument("--sections", default="slowdown,held,threads,shares",
                help="which parts to run: slowdown (table of slowdowns and costs from them), held "
                     "(stop held, from kernel events), threads (8 busy threads), shares "
                     "(per-function agreement with perf)")
args = ap.parse_args()
SECTIONS = ("slowdown", "held", "threads", "shares")  # in the order they run
sections = set(args.sections.split(","))
if sections - set(SECTIONS):
    ap.error(f"unknown section(s): {', '.join(sorted(sections - set(SECTIONS)))}")
build = Build(args.build)
demo = build.example("demo")
threads = build.example("threads")
ptrace_tool = build.tool("ptrace_sample")
signal_tool = build.tool("signal_sender")
BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
FUNCTIONS = ("compute_sixty", "compute_thirty", "compute_ten")


def thread_round_seconds(text):
    """Seconds per round of work of examples/threads, which works for a set time."""
    m = re.search(r"threads: done, (\d+) rounds of work", text)
    if not m or int(m.group(1)) == 0:
        sys.exit("benchmark run failed:\n" + text[-3000:])
    return THREAD_SECONDS / int(m.group(1))


def demo_seconds(text):
    m = re.search(r"demo: \d+ rounds in ([\d.]+) s", text)
    if not m:
        sys.exit("benchmark run failed:\n" + text[-3000:])
    return float(m.group(1))


def stops_of(text):
    m = re.search(r"(\d+) stops", text) or re.search(r"signal_sender: (\d+) signals", text)
    return int(m.group(1)) if m else 0


# Every debugger run loads bench/debugger_cpu.py, to measure the debugger's CPU time per stop.
SCRIPT = {"gdb": "python", "lldb": "script"}
CPU_SETUP = f"import sys; sys.path.insert(0, {BENCH_DIR!r}); import debugger_cpu"
INFERIOR_PID = {"gdb": "gdb.selected_inferior().pid", "lldb": "lldb.process.GetProcessID()"}
# The sample signal, handled as strobe would have it: the debugger stops for it, silently, and
# resumes without passing it on.
SILENT_STOP = {"gdb": "handle SIG63 nostop noprint nopass",
               "lldb": "process handle SIGRTMAX-1 -s false -p false -n false"}


def debugger_session(debugger, program_args, commands):
    start = {"gdb": ["break main", "run", "delete"],
             "lldb": ["breakpoint set -n main", "run", "breakpoint delete 1"]}[debugger]
    return session(build, debugger, [f"{SCRIPT[debugger]} {CPU_SETUP}", *start, *commands],
                   program_args, 180)


def strobe_run(debugger, program_args, frequency):
    """strobe samples the program at `frequency`, as a user would (default --overhead)."""
    script = SCRIPT[debugger]
    return debugger_session(debugger, program_args, [
        f"{script} debugger_cpu.mark()", f"strobe record --frequency {frequency}",
        f"{script} debugger_cpu.report()", "strobe status"])


def alone_run(debugger, program_args, frequency):
    """The debugger on its own: the sample signal sent from outside at `frequency`, each one a
    stop the debugger takes silently and resumes from, with nothing read."""
    script = SCRIPT[debugger]
    send = (f"{script} import subprocess; debugger_cpu.mark(); "
            f"subprocess.Popen([{signal_tool!r}, str({INFERIOR_PID[debugger]}), '{frequency}'])")
    return debugger_session(debugger, program_args, [
        SILENT_STOP[debugger], send, "continue", f"{script} debugger_cpu.report()"])


def debugger_cpu(text):
    m = re.search(r"debugger CPU: ([\d.]+) s", text)
    return float(m.group(1)) if m else None


def run_ptrace(program_args, frequency):
    proc = subprocess.Popen(program_args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tool = sh([ptrace_tool, str(proc.pid), str(frequency)])
    out = proc.communicate()[0]
    m = re.search(r"(\d+) samples of \d+ threads, ([\d.]+) us", tool)
    return out, int(m.group(1)) if m else 0, float(m.group(2)) if m else 0.0


def paired_run(fn, native_run=lambda: demo_seconds(sh(demo_args))):
    """fn() -> (run time, ...), each run right after a native run of the same program: this VM
    runs in phases (for seconds at a time everything is 30-50 % slower), and a baseline taken
    minutes earlier can make a slowdown out of a phase change, or hide one. Returns the native
    time and fn()'s result of the pair with the median difference, then every pair's slowdown.
    native_run() -> the native run's time (a program that runs for a set time: its time per
    round of work)."""
    pairs = []
    for _ in range(args.repeat):
        native = native_run()
        pairs.append((native, fn()))
    pairs.sort(key=lambda pair: pair[1][0] - pair[0])
    native, result = pairs[len(pairs) // 2]
    slowdowns = [(run[0] - n) / n for n, run in pairs]
    return (native, *result, slowdowns)


def function_shares(text):
    shares = {}
    for f in FUNCTIONS:
        m = re.search(r"([\d.]+)%\s+±[\d.]+\s+\S+ \S+\s+.*\b" + f + r"\b", text)
        if m:
            shares[f] = float(m.group(1))
    return shares


demo_args = [demo, "0", str(args.rounds)]
THREAD_SECONDS = 3


def per_stop(seconds, stops):
    """Microseconds per stop, or a dash where there is no figure."""
    return f"{seconds / stops * 1e6:.0f}" if seconds is not None and stops else "–"


def quartiles(values):
    """The lower and upper quartile of a list (nearest rank)."""
    ordered = sorted(values)
    return ordered[len(ordered) // 4], ordered[(3 * len(ordered)) // 4]


def slowdown_section():
    print(f"fixture: `examples/demo 0 {args.rounds}` (single thread); each run follows a native run "
          f"of the same program, the pair with the median difference of {args.repeat} is shown, "
          f"with the quartiles of the {args.repeat} pairs' slowdowns\n")
    rows = []  # (sampler, Hz, native s, run s, stops, tracer-side µs per stop, debugger CPU s, slowdowns)
    for hz in (int(h) for h in args.hz.split(",")):
        rows.append(("raw ptrace (bench/ptrace_sample)", hz, *paired_run(
            lambda: (lambda o, n, u: (demo_seconds(o), n, u, None))(*run_ptrace(demo_args, hz)))))
        for debugger, name in (("gdb", "GDB"), ("lldb", "LLDB")):
            for label, run in (("alone (signal from outside)", alone_run), ("+ strobe", strobe_run)):
                def once():
                    out = run(debugger, demo_args, hz)
                    return demo_seconds(out), stops_of(out), None, debugger_cpu(out)
                rows.append((f"{name} {label}", hz, *paired_run(once)))
        with tempfile.TemporaryDirectory() as tmp:
            data = f"{tmp}/perf.data"
            def perf_once():
                out = sh(["perf", "record", "-e", "cpu-clock", "-F", str(hz), "-g", "-o", data,
                          "--", *demo_args])
                m = re.search(r"\(([\d]+) samples\)", out)
                return demo_seconds(out), int(m.group(1)) if m else 0, None, None
            rows.append(("perf record -F (no stops)", hz, *paired_run(perf_once)))
    print("| sampler | Hz | native run time (s) | run time (s) | slowdown | quartiles | stops | "
          "cost per stop (µs, from slowdown) | debugger CPU per stop (µs) | tracer-side µs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, hz, native, t, stops, tracer, cpu, slowdowns in rows:
        low, high = quartiles(slowdowns)
        print(f"| {name} | {hz} | {native:.3f} | {t:.3f} | {100 * (t - native) / native:+.1f} % | "
              f"{100 * low:+.1f} – {100 * high:+.1f} % | {stops} | {per_stop(t - native, stops)} | "
              f"{per_stop(cpu, stops)} | {f'{tracer:.1f}' if tracer else '–'} |")


def held_section():
    # The "cost per sample" is stop + registers + caller + resume: how long each stop
    # holds the program, from the kernel's own timestamps (bench/stop_hold.py), one run each at
    # 1000 Hz.
    print("\n## Stop held per sample (kernel timestamps: traced stop to PTRACE_CONT), 1000 Hz\n")
    print("| sampler | stops traced | stops taken | median (µs) | p90 (µs) | p99 (µs) |")
    print("|---|---|---|---|---|---|")
    for name, run in (("raw ptrace", lambda: run_ptrace(demo_args, 1000)[1]),
                      ("GDB alone", lambda: stops_of(alone_run("gdb", demo_args, 1000))),
                      ("GDB + strobe", lambda: stops_of(strobe_run("gdb", demo_args, 1000))),
                      ("LLDB alone", lambda: stops_of(alone_run("lldb", demo_args, 1000))),
                      ("LLDB + strobe", lambda: stops_of(strobe_run("lldb", demo_args, 1000)))):
        with SchedTrace() as trace:
            taken = run()
        held = sorted(trace.held_us(os.path.basename(demo)))
        if not held:
            print(f"| {name} | 0 | {taken} | – | – | – |")
            continue
        at = lambda q: held[min(len(held) - 1, int(q * len(held)))]
        print(f"| {name} | {len(held)} | {taken} | {at(0.5):.0f} | {at(0.9):.0f} | "
              f"{at(0.99):.0f} |")


def threads_section():
    # 8 busy threads on this machine's cores: how many samples of a thread each sampler takes in
    # a second when asked for 1000 Hz with --overhead 100, and how long each stop holds its thread
    # (kernel timestamps, bench/stop_hold.py). raw ptrace interrupts every thread and resumes each
    # once read; strobe signals each thread where its front-end takes a stop of one thread while
    # the others run (GDB, LLDB with its library in lldb-server), else the debugger stops them all
    # (LLDB with the library off: STROBE_SERVER_TAP=0).
    print(f"\n## 8 busy threads (`examples/threads {THREAD_SECONDS} 8`), 1000 Hz asked\n")
    print("| sampler | samples of a thread | per second | stops traced | held median (µs) | "
          "p90 (µs) | p99 (µs) |")
    print("|---|---|---|---|---|---|---|")
    thr_args = [threads, str(THREAD_SECONDS), "8"]
    capture = ["strobe record --frequency 1000 --overhead 100 --duration 2", "strobe status"]

    def ptrace_samples():
        run_ptrace(thr_args, 1000)
        return None, THREAD_SECONDS  # one sample per stop traced

    def strobe_samples(debugger, tap="1"):
        os.environ["STROBE_SERVER_TAP"] = tap
        try:
            out = debugger_session(debugger, thr_args, capture)
        finally:
            del os.environ["STROBE_SERVER_TAP"]
        m = re.search(r"(\d+) samples? of \d+ threads?, \d+ stops? over ([\d.]+) s", out)
        return (int(m.group(1)), float(m.group(2))) if m else (0, 2.0)

    for name, run in (("raw ptrace (every thread, each resumed once read)", ptrace_samples),
                      ("GDB + strobe", lambda: strobe_samples("gdb")),
                      ("LLDB + strobe", lambda: strobe_samples("lldb")),
                      ("LLDB + strobe, library off", lambda: strobe_samples("lldb", "0"))):
        with SchedTrace() as trace:
            samples, seconds = run()
        held = sorted(trace.held_us(os.path.basename(threads)))
        samples = len(held) if samples is None else samples
        at = lambda q: held[min(len(held) - 1, int(q * len(held)))] if held else float("nan")
        print(f"| {name} | {samples} | {samples / seconds:.0f} | {len(held)} | {at(0.5):.0f} | "
              f"{at(0.9):.0f} | {at(0.99):.0f} |")

    # The same fixture at the default pacing, against perf: the work the eight threads got done
    # in their 3 s, each run paired with a native run.
    print(f"\n## 8 busy threads (`examples/threads {THREAD_SECONDS} 8`) at 100 Hz: work lost\n")
    print("| sampler | slowdown | quartiles | stops |")
    print("|---|---|---|---|")
    native_run = lambda: thread_round_seconds(sh(thr_args))
    def perf_once():
        with tempfile.TemporaryDirectory() as tmp:
            out = sh(["perf", "record", "-e", "cpu-clock", "-F", "100", "-g", "-o",
                      f"{tmp}/perf.data", "--", *thr_args])
        m = re.search(r"\(([\d]+) samples\)", out)
        return thread_round_seconds(out), int(m.group(1)) if m else 0
    for name, once in (
            ("raw ptrace", lambda: (lambda o, n, u: (thread_round_seconds(o), n))(
                *run_ptrace(thr_args, 100))),
            ("GDB + strobe", lambda: (lambda o: (thread_round_seconds(o), stops_of(o)))(
                strobe_run("gdb", thr_args, 100))),
            ("LLDB + strobe", lambda: (lambda o: (thread_round_seconds(o), stops_of(o)))(
                strobe_run("lldb", thr_args, 100))),
            ("perf record -F", perf_once)):
        native, t, stops, slowdowns = paired_run(once, native_run)
        low, high = quartiles(slowdowns)
        print(f"| {name} | {100 * (t - native) / native:+.1f} % | {100 * low:+.1f} – "
              f"{100 * high:+.1f} % | {stops} |")


def shares_section():
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
    shares = {debugger: function_shares(debugger_session(debugger, long_args, [
        "strobe record --frequency 1000", "strobe profile --by function --callers"]))
        for debugger in ("gdb", "lldb")}
    g, lldb = shares["gdb"], shares["lldb"]
    print("| function | by construction | perf (children %) | GDB + strobe | LLDB + strobe |")
    print("|---|---|---|---|---|")
    for f, truth in zip(FUNCTIONS, (60, 30, 10)):
        print(f"| {f} | {truth} % | {perf.get(f, float('nan')):.1f} % | "
              f"{g.get(f, float('nan')):.1f} % | {lldb.get(f, float('nan')):.1f} % |")


print("# strobe sampling benchmark\n")
section_runs = {"slowdown": slowdown_section, "held": held_section, "threads": threads_section,
                "shares": shares_section}
for name in SECTIONS:
    if name in sections:
        section_runs[name]()
