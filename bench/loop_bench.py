#!/usr/bin/python3
"""strobe's loop-trace benchmark (issue 5, spec 000), one run, side by side in GDB and LLDB:

  a. accuracy against the number of samples: `strobe loop --at ... --duration D --verify --json`
     on loop_funcm (func_M) and loop_helper units 0 (body) for several durations, in time and
     count mode, with the calling context and with the spec's pure annotation;
  b. inferior slowdown during a loop capture at the default frequency, from the fixtures' global
     `iteration` counter read by the debugger before and after each command, against the same
     process under a 1 Hz `strobe record` (the in-debugger native rate) and under `strobe step`;
     with the marker split, with `auto` (per-sample on short iterations) and with expr:iteration;
  c. marker skew: the share of the samples that land on the loop head's instruction, with and
     without the marker breakpoint, and under perf;
  d. reconstruction time and synthetic accuracy: bench/looptrace_bench (efficient vs literal form);
  e. time-mode weights against perf's per-instruction distribution (`perf record -e cpu-clock`,
     the distribution `perf annotate` shows): Pearson correlation over the loop's instructions.

    bench/loop_bench.py [--build build] [--quick] [--repeat N] [--debuggers gdb,lldb]
                        [--sections abcde]

Prints Markdown (bench/RESULTS.md, "Loop traces (issue 5)", holds a run of it with its command)."""
import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile

from benchlib import DEFAULT_BUILD, Build, median, session, sh, timed

ap = argparse.ArgumentParser(description=__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--build", default=DEFAULT_BUILD)
ap.add_argument("--quick", action="store_true", help="fewer durations and shorter captures")
ap.add_argument("--debuggers", default="gdb,lldb", help="comma-separated: gdb, lldb")
ap.add_argument("--sections", default="abcde", help="which parts to run (letters a-e)")
ap.add_argument("--repeat", type=int, help="processes per loop in part b, median kept (default "
                                            "3, 1 with --quick)")
args = ap.parse_args()
build = Build(args.build)
strobe_report = build.strobe_report
looptrace_bench = build.tool("looptrace_bench")

DURATIONS = [0.25, 1.0] if args.quick else [0.25, 0.5, 1.0, 2.0, 4.0]
CAPTURE_SECONDS = 1.0 if args.quick else 3.0  # each capture of parts b, c and e
BASELINE_SECONDS = 1.0 if args.quick else 2.0
PERF_SECONDS = 1.0 if args.quick else 3.0
REPEATS = args.repeat or (1 if args.quick else 3)  # processes per debugger and loop in part b
# Part e compares distributions, which takes samples: its own auto captures ask for a number of
# them (on short iterations one sample is one iteration), however slow the stops are that day.
WEIGHT_SAMPLES = 150 if args.quick else 400
# Single steps per run of part b: LLDB steps are some 50 times dearer than GDB's.
STEPS = {"gdb": 5000 if args.quick else 20000, "lldb": 500 if args.quick else 2000}
FOREVER = "100000"  # the fixtures' own time limit (seconds): never reached, the bench kills them


class Fixture:
    def __init__(self, name, binary, argv, at, functions, short):
        self.name = name  # as the tables print it
        self.binary = build.example(binary)
        self.argv = argv  # after the fixture's SECONDS argument
        self.at = at  # `strobe loop --at`
        self.functions = functions  # the loop target and its callees
        self.short = short  # iterations shorter than the sampling period

    def args(self, seconds=FOREVER):
        return [self.binary, str(seconds), *self.argv]


FUNCM = Fixture("loop_funcm (func_M)", "loop_funcm", [], "func_M",
                ["func_M", "func_A", "func_B", "func_C"], True)
HELPER = Fixture("loop_helper 0 (body)", "loop_helper", ["0"], "body", ["body", "mix", "spin"],
                 True)
HELPER_LONG = Fixture("loop_helper 2000 (body)", "loop_helper", ["2000"], "body",
                      ["body", "mix", "spin"], False)

STAMP = "@@s"
DEBUGGERS = {
    "gdb": {
        "name": "GDB",
        "break": "break main",
        "delete": "delete",
        "kill": "kill",
        "stamp": f'python import time; print("{STAMP}", int(gdb.parse_and_eval("iteration")), '
                 f'repr(time.time()), open("/proc/%d/schedstat" % gdb.selected_inferior().pid)'
                 f'.read().split()[1])',
    },
    "lldb": {
        "name": "LLDB",
        "break": "breakpoint set --name main",
        "delete": "breakpoint delete --force",
        "kill": "process kill",
        "stamp": f'script import time; print("{STAMP}", lldb.target.FindFirstGlobalVariable('
                 f'"iteration").GetValueAsUnsigned(), repr(time.time()), open("/proc/%d/schedstat"'
                 f' % lldb.process.GetProcessID()).read().split()[1])',
    },
}


def log(text):
    print(text, file=sys.stderr, flush=True)


def stamped_session(debugger, commands, program_args):
    """Runs the debugger in batch mode on the fixture: stop at main, then `commands`, each after a
    stamp (iteration counter, wall clock, the inferior's time waiting for a CPU), then a last
    stamp and kill. Returns one record per command: its output, and the iterations, wall seconds
    and seconds waiting for a CPU between its stamps; "failed" when a stamp is missing (the
    debugger died; "out" then holds what it printed)."""
    d = DEBUGGERS[debugger]
    script = [d["break"], "run", d["delete"]]
    for c in commands:
        script += [d["stamp"], c]
    script += [d["stamp"], d["kill"]]
    out = session(build, debugger, script, program_args, 900)
    stamps = list(re.finditer(rf"^{STAMP} (\d+) ([\d.]+) (\d+)$", out, re.MULTILINE))
    records = []
    for i in range(len(commands)):
        if i + 1 >= len(stamps):
            records.append({"out": out[stamps[i].end():] if i < len(stamps) else out,
                            "failed": True})
            continue
        a, b = stamps[i], stamps[i + 1]
        wall = float(b.group(2)) - float(a.group(2))
        waiting = (int(b.group(3)) - int(a.group(3))) / 1e9
        records.append({"out": out[a.end():b.start()], "iterations": int(b.group(1)) -
                        int(a.group(1)), "wall": wall, "waiting": waiting, "failed": False})
    return records


def json_docs(text):
    docs = []
    for line in re.findall(r"^\{.*\}$", text, re.MULTILINE):
        try:
            docs.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return docs


def loop_doc(record):
    for doc in json_docs(record["out"]):
        if "summary" in doc:
            return doc
    return None


def profile_doc(record):
    for doc in json_docs(record["out"]):
        if doc.get("report") == "profile":
            return doc
    return None


def failure(record):
    """The last meaningful lines a command printed, for a table cell."""
    lines = [l for l in record["out"].splitlines()
             if l.strip() and not l.startswith(("(lldb)", STAMP))]
    text = " / ".join(lines[-2:]) if lines else "no output"
    return text.replace("|", "\\|")[:160]


def samples_ended(record):
    m = re.search(r"sampling ended: .*?; (\d+) samples", record["out"])
    return int(m.group(1)) if m else None


def pct(x):
    return "–" if x is None else f"{100 * x:.1f} %"


# --- a: accuracy against the number of samples ---------------------------------------------
VARIANTS = [("time", "context"), ("time", "pure"), ("count", "context"), ("count", "pure")]


def accuracy_cell(doc):
    s = doc["summary"]
    if "accuracy" not in s:
        return "no verify"
    cell = f"{s['accuracy']:.3f}"
    if "mergedAccuracy" in s:
        cell += f" ({s['mergedAccuracy']:.3f})"
    return cell


def part_a(debuggers):
    lines = ["### a. Accuracy against the number of samples", "",
             "`strobe loop --at LOOP --duration D --mode MODE --annotation KIND --verify --json` "
             "at the defaults (997 Hz at most, --overhead 3, split auto), one capture per cell (the four "
             "variants are four captures of the same process, one after the other). Accuracy = 1 - "
             "edit distance / length between the printed path and one single-stepped iteration "
             "(the engine's own `--verify` figure); in parentheses the merged trace's accuracy "
             "before the path is walked through the code, where the JSON has it. Samples, split "
             "and coverage are those of the time/context capture.", "",
             "| debugger | loop | duration (s) | samples in the loop | split | truth covered | "
             + " | ".join(f"{m}, {a}" for m, a in VARIANTS) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(VARIANTS)]
    for debugger in debuggers:
        for fixture in (FUNCM, HELPER):
            for duration in DURATIONS:
                log(f"a: {debugger} {fixture.name} {duration} s")
                commands = [f"strobe loop --at {fixture.at} --duration {duration} --mode {m} "
                            f"--annotation {a} --verify --json" for m, a in VARIANTS]
                records = stamped_session(debugger, commands, fixture.args())
                cells, first = [], None
                for record in records:
                    doc = loop_doc(record)
                    if doc is None:
                        cells.append(f"failed: {failure(record)}")
                        continue
                    first = first or doc
                    cells.append(accuracy_cell(doc))
                s = first["summary"] if first else {}
                lines.append(
                    f"| {DEBUGGERS[debugger]['name']} | {fixture.name} | {duration:g} | "
                    f"{s.get('samples', '–')} | {s.get('split', '–')} | "
                    f"{pct(s.get('truthCoverage'))} | " + " | ".join(cells) + " |")
    return lines


# --- b, c, e: one session per debugger and fixture ------------------------------------------
SPLITS = [("marker", "--split marker"), ("auto", ""), ("expr:iteration", "--split expr:iteration")]


def rebuild_seconds(path):
    """Wall time strobe-report takes to rebuild the loop of a saved capture, less its loading: the
    part of a `strobe loop` command during which the inferior is stopped but not sampled."""
    load = min(timed([strobe_report, path, "status"])[0] for _ in range(2))
    rebuild = min(timed([strobe_report, path, "loop", "--json"])[0] for _ in range(2))
    return max(0.0, rebuild - load)


def running_seconds(record, stopped_extra=0.0):
    """Wall time of a command less the time the inferior waited for a CPU (other jobs on this
    shared machine; /proc/PID/schedstat) and less `stopped_extra`."""
    return record["wall"] - record["waiting"] - stopped_extra


def native_rate(record):
    if record["failed"] or running_seconds(record) <= 0:
        return None
    return record["iterations"] / running_seconds(record)


def mean_rate(*records):
    rates = [r for r in map(native_rate, records) if r]
    return sum(rates) / len(rates) if rates else None


def capture_runs(debugger, fixture, tmp):
    """In one process: the three splits (each followed by the instruction profile and a save) and,
    for short iterations, single-stepping, each between two 1 Hz baselines (the machine's speed
    drifts). Returns {"splits": {split: measurements}, "step": measurements or None}."""
    baseline = f"strobe record --frequency 1 --duration {BASELINE_SECONDS}"
    commands = [baseline]
    files = {}
    for split, option in SPLITS:
        files[split] = f"{tmp}/{debugger}-{fixture.at}-{'-'.join(fixture.argv)}-" \
                       f"{split.split(':')[0]}.strobe"
        commands.append(" ".join(filter(None, [f"strobe loop --at {fixture.at} --duration "
                                                 f"{CAPTURE_SECONDS}", option, "--json"])))
        commands += ["strobe profile --by instruction --json", f"strobe save {files[split]}",
                     baseline]
    if fixture.short:
        commands += [f"strobe step --count {STEPS[debugger]} --quiet", baseline]
    weighed = fixture.short and "e" in args.sections
    if weighed:
        commands += [f"strobe loop --at {fixture.at} --iterations {WEIGHT_SAMPLES} --duration 600 "
                     f"--json", "strobe profile --by instruction --json"]
    records = stamped_session(debugger, commands, fixture.args())
    if weighed:
        loop, prof = records[-2], records[-1]
        result_weights = {"doc": loop_doc(loop), "error": None,
                          "profile": None if prof["failed"] else profile_doc(prof)}
        if result_weights["doc"] is None or loop["failed"]:
            result_weights["error"] = failure(loop)
        records = records[:-2]
    result = {"splits": {}, "step": None, "weights": result_weights if weighed else None}
    for k, (split, _) in enumerate(SPLITS):
        loop, prof = records[1 + 4 * k], records[2 + 4 * k]
        entry = {"doc": loop_doc(loop), "profile": None if prof["failed"] else profile_doc(prof),
                 "native": mean_rate(records[4 * k], records[4 + 4 * k]), "error": None}
        if entry["doc"] is None or loop["failed"]:
            entry["error"] = failure(loop)
        else:
            rebuild = rebuild_seconds(files[split]) if os.path.exists(files[split]) else 0.0
            entry["iterations"] = loop["iterations"]
            entry["seconds"] = running_seconds(loop, rebuild)
            entry["waiting"] = loop["waiting"] / loop["wall"]
            entry["samples"] = samples_ended(loop)
        result["splits"][split] = entry
    if fixture.short:
        step = records[-2]
        if not step["failed"] and running_seconds(step) > 0:
            m = re.search(r"stepped (\d+) instructions", step["out"])
            result["step"] = {"iterations": step["iterations"], "seconds": running_seconds(step),
                              "waiting": step["waiting"] / step["wall"],
                              "native": mean_rate(records[-3], records[-1]),
                              "instructions": int(m.group(1)) if m else STEPS[debugger]}
    return result


def lost_per_stop(entry, marker):
    """Microseconds the inferior lost per stop: a sample, or a marker hit (one per iteration)."""
    stops = (entry["samples"] or 0) + (entry["iterations"] if marker else 0)
    if not entry["native"] or not stops:
        return None
    return 1e6 * (entry["seconds"] - entry["iterations"] / entry["native"]) / stops


def factor(entry):
    """How many times longer the inferior took than at its native rate."""
    if not entry["native"] or entry["seconds"] <= 0 or entry["iterations"] <= 0:
        return None
    return entry["native"] / (entry["iterations"] / entry["seconds"])


def slowdown_text(factors):
    """Median slowdown over the repeats, with the range when there are several."""
    values = sorted(f for f in factors if f is not None)
    if not values:
        return "–"

    def text(f):
        return f"x{f:,.0f}" if f >= 10 else f"{100 * (f - 1):+.1f} %"
    middle = text(statistics.median(values))
    return middle if len(values) == 1 else f"{middle} ({text(values[0])} to {text(values[-1])})"


def number(x, digits=0):
    return "–" if x is None else f"{x:,.{digits}f}"


def part_b(runs):
    repeats = len(next(iter(runs.values()))) if runs else 0
    lines = ["### b. Inferior slowdown during the capture", "",
             f"Progress = the fixture's `iteration` counter, read by the debugger before and after "
             f"each command, over the time between the reads less the time the inferior waited "
             f"for a CPU (`/proc/PID/schedstat`: other jobs on this shared VM; column \"waited\") "
             f"and, for `strobe loop`, less the time strobe-report takes to rebuild the same "
             f"capture (the inferior is stopped then, not sampled). Native rate = the same process "
             f"under `strobe record --frequency 1 --duration {BASELINE_SECONDS:g}` (1 or 2 "
             f"stops), the mean of the runs just before and just after the command. Captures of "
             f"{CAPTURE_SECONDS:g} s at the defaults (997 Hz at most, --overhead 3); slowdown = native rate / rate - 1 "
             f"(target <= 5 %), median of {repeats} process(es) with the range. auto includes its "
             f"50 ms probe with the marker. µs lost per stop = (time - iterations / native rate) "
             f"/ stops, the stops being the samples plus, with the marker, one trap per iteration "
             f"(auto's probe not counted). Single-stepping: `strobe step --count N`; \"same "
             f"iterations\" = how long stepping would take for the iterations the auto capture "
             f"ran.", "",
             "| debugger | loop | how | split used | native iter/s | samples | waited | iter/s | "
             "slowdown | µs lost per stop |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (debugger, fixture), repeats_of in runs.items():
        head = f"| {DEBUGGERS[debugger]['name']} | {fixture.name} |"
        for split, _ in SPLITS:
            entries = [run["splits"][split] for run in repeats_of]
            good = [e for e in entries if not e["error"]]
            if not good:
                lines.append(f"{head} loop, {split} | – | – | – | – | – | failed: "
                             f"{entries[0]['error']} | – |")
                head = "| | |"
                continue
            used = good[0]["doc"]["summary"].get("split", "?")
            failed = f" ({len(entries) - len(good)} failed)" if len(good) < len(entries) else ""
            lines.append(
                f"{head} loop, {split} | {used} | {number(median(e['native'] for e in good))} | "
                f"{number(median(e['samples'] for e in good))} | "
                f"{pct(max(e['waiting'] for e in good))} | "
                f"{number(median(e['iterations'] / e['seconds'] for e in good))} | "
                f"{slowdown_text(factor(e) for e in good)}{failed} | "
                f"{number(median(lost_per_stop(e, used == 'marker') for e in good))} |")
            head = "| | |"
        steps = [run["step"] for run in repeats_of if run["step"]]
        if steps:
            autos = [run["splits"]["auto"] for run in repeats_of]
            autos = [a for a in autos if not a["error"]]
            rate = median(s["iterations"] / s["seconds"] for s in steps)
            same = (f"; same iterations: {median(a['iterations'] for a in autos) / rate:,.0f} s"
                    if rate and autos else "")
            lines.append(
                f"{head} step {steps[0]['instructions']} instructions | – | "
                f"{number(median(s['native'] for s in steps))} | – | "
                f"{pct(max(s['waiting'] for s in steps))} | {number(rate, 1)} | "
                f"{slowdown_text(factor(s) for s in steps)}{same} | "
                f"{number(median(1e6 * s['seconds'] / s['instructions'] for s in steps))} "
                f"per instruction |")
        elif fixture.short:
            lines.append(f"{head} step | – | – | – | – | – | failed | – |")
    return lines


def head_share(profile, head):
    """Share of the capture's samples at the loop head's pc, and at the next two instructions'."""
    if not profile or not profile.get("allSamples"):
        return None, None
    rows = sorted(profile["rows"], key=lambda r: r["pc"])
    total = profile["allSamples"]
    at = sum(r["samples"] for r in rows if r["pc"] == head)
    pcs = sorted({r["pc"] for r in rows if r["pc"] > head and r["pc"] < head + 16})
    near = sum(r["samples"] for r in rows if r["pc"] in pcs[:2])
    return at / total, near / total


def part_c(runs, perf):
    lines = ["### c. Marker skew: samples dragged to the loop head", "",
             "Share of all the capture's samples whose pc is the loop head's instruction (for a "
             "whole function, its entry: where the marker breakpoint sits), and the share on the "
             "next two instructions; from `strobe profile --by instruction --json` right after "
             "each capture of part b (median over its processes). perf: the same share of the "
             "fixture's samples under `perf record -e cpu-clock` (no stops).", "",
             "| debugger | loop | split | samples | on the head | next two | perf on the head |",
             "|---|---|---|---|---|---|---|"]
    for (debugger, fixture), repeats_of in runs.items():
        name = DEBUGGERS[debugger]["name"]
        base = perf.get(fixture.name)
        for split, _ in SPLITS:
            good = [run["splits"][split] for run in repeats_of]
            good = [e for e in good if not e["error"] and e["profile"]]
            if not good:
                lines.append(f"| {name} | {fixture.name} | {split} | failed | – | – | – |")
                continue
            shares_at = [head_share(e["profile"], int(e["doc"]["head"], 16)) for e in good]
            perf_head = None
            offset = module_base(good[0]["profile"], fixture)
            if base and base["all"] and offset is not None:
                head = int(good[0]["doc"]["head"], 16) - offset
                perf_head = base["counts"].get(head, 0) / base["all"]
            lines.append(f"| {name} | {fixture.name} | {split} "
                         f"({good[0]['doc']['summary'].get('split', '?')}) | "
                         f"{number(median(e['profile']['allSamples'] for e in good))} | "
                         f"{pct(median(a for a, _ in shares_at))} | "
                         f"{pct(median(n for _, n in shares_at))} | {pct(perf_head)} |")
    return lines


# --- e: against perf -------------------------------------------------------------------------
def symbols(binary):
    """{function: (file address, size)} from nm."""
    table = {}
    for line in sh(["nm", "-S", "--defined-only", binary]).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "TtWw":
            table[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return table


def perf_profile(fixture, tmp):
    """perf's samples per file address of the fixture's code, and its total sample count."""
    data = f"{tmp}/perf-{fixture.at}-{'-'.join(fixture.argv)}.data"
    sh(["perf", "record", "-q", "-e", "cpu-clock", "-o", data, "--",
        *fixture.args(PERF_SECONDS)])
    table = symbols(fixture.binary)
    counts, total = {}, 0
    for line in sh(["perf", "script", "-i", data, "-F", "ip,sym,symoff,dso"]).splitlines():
        m = re.match(r"\s*[0-9a-f]+\s+(\S+)\+0x([0-9a-f]+)\s+\((.*)\)", line)
        if not m:
            continue
        total += 1
        if os.path.realpath(m.group(3)) != os.path.realpath(fixture.binary):
            continue
        if m.group(1) in table:
            address = table[m.group(1)][0] + int(m.group(2), 16)
            counts[address] = counts.get(address, 0) + 1
    return {"counts": counts, "all": total, "symbols": table}


def module_base(profile, fixture):
    """Load address of the fixture's executable in the debugged process."""
    for row in profile["rows"]:
        if os.path.realpath(row.get("module", "")) == os.path.realpath(fixture.binary):
            return row["pc"] - row["moduleOffset"]
    return None


def pearson(xs, ys):
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def in_functions(address, fixture, table):
    return any(table[f][0] <= address < table[f][0] + table[f][1]
               for f in fixture.functions if f in table)


def shares(counts):
    total = sum(counts.values())
    return {a: c / total for a, c in counts.items()} if total else {}


def correlations(entry, fixture, base):
    """(instructions compared, strobe's samples in the loop, r of the loop weights, r of the raw
    samples) against perf; None when the capture does not show where the fixture is loaded."""
    offset = module_base(entry["profile"], fixture)
    if offset is None:
        return None
    table = base["symbols"]
    weights = {}
    for row in entry["doc"]["rows"]:
        address = int(row["address"], 16) - offset
        weights[address] = weights.get(address, 0) + row.get("samples", 0)
    raw = {}
    for row in entry["profile"]["rows"]:
        address = row["pc"] - offset
        if in_functions(address, fixture, table):
            raw[address] = raw.get(address, 0) + row["samples"]
    ref = {a: c for a, c in base["counts"].items() if in_functions(a, fixture, table)}
    addresses = sorted(set(weights) | set(ref) | set(raw))
    w, r, p = shares(weights), shares(raw), shares(ref)
    reference = [p.get(a, 0) for a in addresses]
    return (len(addresses), sum(weights.values()),
            pearson([w.get(a, 0) for a in addresses], reference),
            pearson([r.get(a, 0) for a in addresses], reference))


def part_e(runs, perf):
    lines = ["### e. Time-mode weights against perf", "",
             f"Pearson correlation, over the instructions of the loop target and its callees, "
             f"between perf's samples per instruction (`perf record -e cpu-clock`, "
             f"{PERF_SECONDS:g} s, native run: `perf script`'s counts per address, of which "
             f"`perf annotate` prints the percentages) and (1) the time-mode weights of `strobe "
             f"loop --iterations {WEIGHT_SAMPLES} --json` (auto, so per-sample: {WEIGHT_SAMPLES} "
             f"samples, after part b's captures in the same processes; a callee's instruction "
             f"reached from several call sites sums its rows), (2) strobe's raw samples per "
             f"instruction of the "
             f"same capture; the two differ by the samples the rebuild leaves out (outside the "
             f"loop, in no complete iteration). perf cannot tell call sites apart, so neither can "
             f"this comparison. Median over part b's processes, lowest in parentheses. Target >= "
             f"0.9.", "",
             "| debugger | loop | instructions | strobe samples in the loop | perf samples in "
             "the loop | r (loop weights) | r (raw samples) |",
             "|---|---|---|---|---|---|---|"]
    for (debugger, fixture), repeats_of in runs.items():
        if not fixture.short or fixture.name not in perf:
            continue
        name = DEBUGGERS[debugger]["name"]
        base = perf[fixture.name]
        good = [run["weights"] for run in repeats_of if run["weights"]]
        found = [correlations(e, fixture, base) for e in good if not e["error"] and e["profile"]]
        found = [f for f in found if f]
        if not found:
            lines.append(f"| {name} | {fixture.name} | failed | – | – | – | – |")
            continue
        in_loop = sum(c for a, c in base["counts"].items()
                      if in_functions(a, fixture, base["symbols"]))

        def r_text(values):
            values = [v for v in values if v is not None]
            return f"{statistics.median(values):.3f} ({min(values):.3f})" if values else "–"
        lines.append(f"| {name} | {fixture.name} | {number(median(f[0] for f in found))} | "
                     f"{number(median(f[1] for f in found))} | {number(in_loop)} | "
                     f"{r_text(f[2] for f in found)} | {r_text(f[3] for f in found)} |")
    return lines


# --- d: reconstruction ------------------------------------------------------------------------
def part_d():
    argv = [looptrace_bench, "--literal-cap-seconds", "2" if args.quick else "10"]
    if args.quick:
        argv += ["--section", "time"]
    log("d: " + " ".join(argv))
    took, out = timed(argv, timeout=3600)
    lines = ["### d. Reconstruction time and synthetic accuracy (bench/looptrace_bench)", "",
             f"`{' '.join(os.path.relpath(a) if a.startswith('/') else a for a in argv)}` "
             f"({took:.0f} s); its output, headings demoted:", ""]
    for line in out.splitlines():
        lines.append("#### " + line.lstrip("#").strip() if line.startswith("#") else line)
    return lines


def main():
    debuggers = [d.strip() for d in args.debuggers.split(",") if d.strip()]
    load = os.getloadavg()
    print("## Loop traces (issue 5)\n")
    print(f"Command: `bench/loop_bench.py {' '.join(sys.argv[1:])}` (load average at the start "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on 2 vCPUs)\n")
    sections = args.sections
    with tempfile.TemporaryDirectory(prefix="loop_bench.") as tmp:
        perf = {}
        if "c" in sections or "e" in sections:
            for fixture in (FUNCM, HELPER, HELPER_LONG):
                log(f"perf: {fixture.name}")
                perf[fixture.name] = perf_profile(fixture, tmp)
        runs = {}
        if any(s in sections for s in "bce"):
            for debugger in debuggers:
                for fixture in (FUNCM, HELPER, HELPER_LONG):
                    log(f"b/c/e: {debugger} {fixture.name}")
                    runs[(debugger, fixture)] = [capture_runs(debugger, fixture, tmp)
                                                 for _ in range(REPEATS)]
        parts = []
        if "a" in sections:
            parts.append(part_a(debuggers))
        if "b" in sections:
            parts.append(part_b(runs))
        if "c" in sections:
            parts.append(part_c(runs, perf))
        reconstruction = part_d() if "d" in sections else None
        if reconstruction:
            parts.append(reconstruction)
        if "e" in sections:
            parts.append(part_e(runs, perf))
        for lines in parts:
            print("\n".join(lines) + "\n", flush=True)


main()
