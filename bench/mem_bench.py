#!/usr/bin/python3
"""strobe's heap-tracking benchmark (issue 4, spec 003), one run, side by side:

  - the raw cost of a trap (bench/int3_cost.c: an int3 under plain ptrace, with and without the
    step over a planted breakpoint);
  - `strobe mem` in GDB and in LLDB on examples/mem/memchurn (a malloc / free pair per iteration,
    16 frames down): allocation + free events per second, traps per event and per pair;
  - heaptrack on the same fixture: its slowdown and cost per event;
  - on memlibs fig3 (spec 003's Fig. 3 call path) each library's peak and leaked bytes as strobe
    and heaptrack see them, with heaptrack's call sites keyed by the same rule (first library
    called from main).

    bench/mem_bench.py [--build build] [--pairs N] [--heaptrack-pairs N] [--repeat R]

Prints Markdown (bench/RESULTS-mem.md holds a run of it with its command line)."""
import argparse
import json
import os
import re
import sys
import tempfile

from benchlib import DEFAULT_BUILD, Build, median, session, sh, timed

ap = argparse.ArgumentParser(description=__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--build", default=DEFAULT_BUILD)
ap.add_argument("--pairs", type=int, default=2000, help="malloc / free pairs under a debugger")
ap.add_argument("--heaptrack-pairs", type=int, default=2000000,
                help="pairs under heaptrack (many: its cost per event is tiny)")
ap.add_argument("--depth", type=int, default=16, help="frames below main at each call")
ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (the median is kept)")
args = ap.parse_args()
build = Build(args.build)
churn = build.example("memchurn")
memlibs = build.example("memlibs")
here = os.path.dirname(os.path.abspath(__file__))
# A malloc traps at its entry and at its return (the result is only in rax there); a free at its
# entry. Nothing cheaper records the block and its stack from a debugger.
DESIGN_TRAPS_PER_PAIR = 3


def must(pattern, text, what):
    m = re.search(pattern, text, re.MULTILINE)
    if not m:
        sys.exit(f"{what}: no match for {pattern!r} in:\n{text[-3000:]}")
    return m


# --- raw trap cost ---------------------------------------------------------------------------
def int3_costs(tmp):
    tool = f"{tmp}/int3_cost"
    built = sh(["cc", "-O2", "-o", tool, f"{here}/int3_cost.c"])
    if not os.path.exists(tool):
        sys.exit("int3_cost.c does not build:\n" + built)
    out = sh([tool, "20000"])
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"int3_cost: (\w+)\s+\d+ hits in [\d.]+ s: ([\d.]+) us", out)}


# --- strobe in a debugger --------------------------------------------------------------------
STAMP = "@@t "
# Per debugger: benchlib's name for it, its break command, a command that prints a time stamp, and
# its kill command.
DEBUGGERS = {
    "GDB": ("gdb", "break", f'python print("{STAMP}" + repr(__import__("time").time()))', "kill"),
    "LLDB": ("lldb", "breakpoint set --name",
             f'script print("{STAMP}" + repr(__import__("time").time()))', "process kill"),
}


def seconds_between_stamps(out, what):
    """Seconds between the two time stamps a session printed; exits with its output without them."""
    stamps = [float(t) for t in re.findall(rf"^{STAMP}([\d.]+)$", out, re.MULTILINE)]
    if len(stamps) != 2:
        sys.exit(f"{what}: no timestamps in:\n{out[-3000:]}")
    return stamps[1] - stamps[0]


def strobe_run(debugger, argv, start="tracking_starts", stop="ledger_print"):
    """Seconds from `continue` at `start` to the stop at `stop`, events, traps."""
    which, brk, stamp, kill = DEBUGGERS[debugger]
    out = session(build, which, [f"{brk} {start}", "run", "strobe mem start", f"{brk} {stop}",
                                 stamp, "continue", stamp, "strobe mem status", kill], argv)
    seconds = seconds_between_stamps(out, debugger)
    statuses = re.findall(r"events: (\d+); traps: (\d+)", out)  # at `mem start`, at the stop
    if len(statuses) != 2:
        sys.exit(f"{debugger}: no status in:\n{out[-3000:]}")
    return seconds, int(statuses[1][0]), int(statuses[1][1])


# The debugger's own breakpoints that continue by themselves, on malloc's and free's entries, no
# strobe: what one hit costs each debugger before strobe does anything.
FLOOR_BREAKPOINTS = {
    "GDB": ['python exec("class Through(gdb.Breakpoint):\\n  def stop(self):\\n    return False\\n'
            'Through(\\"malloc\\", internal=True)\\nThrough(\\"free\\", internal=True)")'],
    "LLDB": ["breakpoint set --name malloc --auto-continue true",
             "breakpoint set --name free --auto-continue true"],
}


def debugger_floor(debugger, pairs):
    """Seconds per hit of the debugger's own auto-continuing breakpoints (2 hits per pair)."""
    which, brk, stamp, kill = DEBUGGERS[debugger]
    out = session(build, which, [f"{brk} tracking_starts", "run", *FLOOR_BREAKPOINTS[debugger],
                                 f"{brk} ledger_print", stamp, "continue", stamp, kill],
                  [churn, str(pairs), str(args.depth)])
    return seconds_between_stamps(out, f"{debugger} floor") / (2 * pairs)


def strobe_fig3(debugger):
    which, brk, _, _ = DEBUGGERS[debugger]
    out = session(build, which, [f"{brk} tracking_starts", "run", "strobe mem start", "continue",
                                 "strobe mem table --json"], [memlibs, "fig3", "10"])
    doc = json.loads(must(r"^\{.*\}$", out, debugger).group(0))
    return {row["key"]: (row["peakLiveBytes"], row["liveBytes"], row["liveBlocks"])
            for row in doc["rows"]}


# --- heaptrack -------------------------------------------------------------------------------
def heaptrack_run(tmp, program_args):
    data = f"{tmp}/ht"
    for f in os.listdir(tmp):
        if f.startswith("ht."):
            os.unlink(f"{tmp}/{f}")
    seconds, out = timed(["heaptrack", "-o", data, *program_args])
    files = [f for f in os.listdir(tmp) if f.startswith("ht.")]
    if not files:
        sys.exit("heaptrack wrote nothing:\n" + out)
    return seconds, f"{tmp}/{files[0]}"


def heaptrack_stacks(report):
    """{innermost-first function names: [(function, module)]} of every call site heaptrack_print
    lists (peak consumers and leaks)."""
    stacks = {}
    for block in re.split(r"\n(?=\S)", report):
        if not re.match(r"\S+ (peak memory consumed|leaked) over \d+ calls from", block):
            continue
        frames = []
        for line in block.splitlines()[1:]:
            if line.startswith("    in "):
                frames[-1] = (frames[-1][0], line[len("    in "):].strip())
            elif line.startswith("  ") and not line.startswith("    "):
                frames.append((line.strip(), None))
        stacks[tuple(f for f, _ in frames)] = frames
    return stacks


def first_library(frames):
    """Spec 003's default key: the outermost library frame below main; the executable when the
    program allocated by itself; "before main" for what the C++ runtime and the loader did."""
    library = None
    for function, module in frames:
        if function == "main":
            return os.path.basename(library or memlibs)
        if module and module != memlibs:
            library = module
    return "before main"


def heaptrack_fig3(tmp):
    """{library: [peak bytes, leaked bytes]} from heaptrack on memlibs fig3: the call sites'
    modules from heaptrack_print's text, their exact bytes from its flame-graph stacks."""
    _, data = heaptrack_run(tmp, [memlibs, "fig3", "10"])
    stacks = heaptrack_stacks(sh(["heaptrack_print", "-f", data, "-m", "0", "-p", "1", "-a", "0",
                                  "-T", "0", "-l", "1", "-n", "1000"]))
    result = {}
    for index, cost in enumerate(("peak", "leaked")):
        folded = f"{tmp}/{cost}.txt"
        sh(["heaptrack_print", "-f", data, "-F", folded, "--flamegraph-cost-type", cost])
        with open(folded) as f:
            for line in f:
                path, _, value = line.rstrip().rpartition(" ")
                # "main (memlibs.c);...;func_b0 (libb.c);": outermost first, file names only
                functions = tuple(re.sub(r" \([^()]*\)$", "", frame)
                                  for frame in reversed(path.rstrip(";").split(";")))
                frames = stacks.get(functions, [(name, None) for name in functions])
                result.setdefault(first_library(frames), [0, 0])[index] += int(value)
    return result


def main():
    with tempfile.TemporaryDirectory() as tmp:
        int3 = int3_costs(tmp)
        base = median([timed([churn, str(args.pairs), str(args.depth)])[0]
                       for _ in range(args.repeat)])
        rows = []
        for debugger in ("GDB", "LLDB"):
            runs = sorted(strobe_run(debugger, [churn, str(args.pairs), str(args.depth)])
                          for _ in range(args.repeat))
            rows.append((debugger, *runs[len(runs) // 2]))
        # C++: operator new calls malloc (nested: two more traps), sized delete forwards to delete,
        # which jumps to free (two more entries).
        cxx_pairs = max(args.pairs // 4, 1)
        cxx = {d: strobe_run(d, [build.example("calls"), str(cxx_pairs), str(args.depth), "1"],
                             "main", "_exit") for d in ("GDB", "LLDB")}
        floors = {d: median([debugger_floor(d, args.pairs) for _ in range(args.repeat)])
                  for d in ("GDB", "LLDB")}

        hp = args.heaptrack_pairs
        base_many = median([timed([churn, str(hp), str(args.depth)])[0]
                            for _ in range(args.repeat)])
        base_one = median([timed([churn, "1", str(args.depth)])[0] for _ in range(args.repeat)])
        ht_many = median([heaptrack_run(tmp, [churn, str(hp), str(args.depth)])[0]
                          for _ in range(args.repeat)])
        ht_one = median([heaptrack_run(tmp, [churn, "1", str(args.depth)])[0]
                         for _ in range(args.repeat)])
        ht_fig3 = heaptrack_fig3(tmp)
        strobe_libs = {d: strobe_fig3(d) for d in ("GDB", "LLDB")}

    load = os.getloadavg()
    print("# strobe heap tracking benchmark\n")
    print(f"load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
          f"({os.cpu_count()} CPUs)\n")
    print("## The trap (bench/int3_cost.c, plain ptrace, 20000 hits)\n")
    print("| what | µs per hit |\n|---|---|")
    for name, what in (("trap", "int3 + SIGTRAP to the tracer + PTRACE_CONT"),
                       ("breakpoint",
                        "planted int3 hit, rip fixed, step over, re-planted, continued"),
                       ("step", "the single-step of that (PTRACE_SINGLESTEP + waitpid)")):
        print(f"| {what} | {int3.get(name, float('nan')):.1f} |")

    events_target = 2500
    print(f"\n## `strobe mem` on `memchurn {args.pairs} {args.depth}` ({args.pairs} malloc / free "
          f"pairs, {args.depth} frames deep; median of {args.repeat})\n")
    print(f"fixture alone: {base * 1e3:.1f} ms for the whole run (process start included)\n")
    print("| debugger | tracked run (s) | events | events / s | target ≥ 2500 | traps "
          "| traps / event | traps / pair | beyond the design's 3 | µs per trap "
          "| × raw breakpoint |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for debugger, seconds, events, traps in rows:
        rate = events / seconds
        pairs = events / 2
        per_trap = seconds / traps * 1e6
        print(f"| {debugger} + strobe | {seconds:.2f} | {events} | {rate:.0f} | "
              f"{'met' if rate >= events_target else 'missed'} | {traps} | {traps / events:.2f} | "
              f"{traps / pairs:.2f} | {traps / pairs - DESIGN_TRAPS_PER_PAIR:+.2f} | "
              f"{per_trap:.0f} | {per_trap / int3['breakpoint']:.1f} |")

    print(f"\nC++ (`examples/calls {cxx_pairs} {args.depth} 1`: operator new + sized operator "
          "delete per call, plus one malloc of stdout's buffer):\n")
    print("| debugger | events | traps | traps / new+delete pair | beyond the design's 3 "
          "| events / s |")
    print("|---|---|---|---|---|---|")
    for debugger, (seconds, events, traps) in cxx.items():
        pairs = (events - 1) / 2  # less stdout's malloc, and its 2 traps below
        print(f"| {debugger} + strobe | {events} | {traps} | {(traps - 2) / pairs:.2f} | "
              f"{(traps - 2) / pairs - DESIGN_TRAPS_PER_PAIR:+.2f} | {events / seconds:.0f} |")

    print("\nThe debuggers' own floor: their breakpoints on malloc and free that continue by "
          "themselves (GDB: a Python breakpoint whose stop() says no; LLDB: --auto-continue), "
          "no strobe, same run:\n")
    print("| debugger | µs per hit | events / s at the design's 1.5 traps per event |")
    print("|---|---|---|")
    for debugger in ("GDB", "LLDB"):
        floor = floors[debugger]
        print(f"| {debugger} | {floor * 1e6:.0f} | {1 / (1.5 * floor):.0f} |")

    ht_events = 2 * (hp - 1)
    ht_cost = ((ht_many - ht_one) - (base_many - base_one)) / ht_events * 1e6
    print(f"\n## heaptrack on `memchurn {hp} {args.depth}` (median of {args.repeat})\n")
    print("| run | fixture alone (s) | under heaptrack (s) | slowdown | µs per event "
          "(start-up excluded: the `memchurn 1` run subtracted) |")
    print("|---|---|---|---|---|")
    print(f"| {hp} pairs | {base_many:.3f} | {ht_many:.3f} | ×{ht_many / base_many:.1f} | "
          f"{ht_cost:.3f} |")
    print(f"| 1 pair (start-up) | {base_one:.3f} | {ht_one:.3f} | ×{ht_one / base_one:.1f} "
          "| – |")
    for debugger, seconds, events, traps in rows:
        per_event = seconds / events * 1e6
        print(f"\n{debugger} + strobe per event: {per_event:.0f} µs, "
              f"×{per_event / ht_cost:.0f} heaptrack's.", end="")
    print("\n\n## memlibs fig3 10: per-library peak and leaked bytes (first library called from "
          "main)\n")
    print("| library | GDB + strobe peak / leaked (blocks) | LLDB + strobe peak / leaked (blocks) "
          "| heaptrack peak / leaked |")
    print("|---|---|---|---|")
    keys = sorted(set(ht_fig3) | set(strobe_libs["GDB"]) | set(strobe_libs["LLDB"]))
    for key in keys:
        cells = []
        for d in ("GDB", "LLDB"):
            v = strobe_libs[d].get(key)
            cells.append(f"{v[0]} B / {v[1]} B ({v[2]})" if v else "–")
        h = ht_fig3.get(key)
        cells.append(f"{h[0]} B / {h[1]} B" if h else "–")
        print(f"| {key} | {' | '.join(cells)} |")
    print("\n\"before main\": what heaptrack saw the C++ runtime and the loader allocate before "
          "main; strobe's tracking starts later, at tracking_starts().")


main()
