#!/usr/bin/python3
"""The diff-record codec's benchmark (spec 001): bytes per record and speed on real traces.

    bench/codec_size.py [--build build] [--count 200000]

Records single-step traces of the step-loop fixtures with bench/step_trace (ptrace, x86-64) with and
without memory operands, and sample streams (1000 Hz stops of the demo and of a fixture), then runs
bench/codec_size on them. Prints Markdown; bench/RESULTS.md, "Diff-record codec", records runs."""
import argparse
import os
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
ap.add_argument("--count", type=int, default=200000, help="instructions per step trace")
args = ap.parse_args()
build = os.path.abspath(args.build)
step_trace = f"{build}/bench/step_trace"
codec_size = f"{build}/bench/codec_size"


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{p.stdout}{p.stderr}")
    return p.stdout


def function_offset(program, name):
    for line in run(["nm", program]).splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] == name:
            return fields[0]
    sys.exit(f"{program} has no symbol {name}")


with tempfile.TemporaryDirectory(prefix="codec-bench-") as tmp:
    inputs = []
    for fixture, memory in [("int", False), ("chase", False), ("float", False), ("chase", True),
                            ("float", True)]:
        program = f"{build}/examples/steploop_{fixture}"
        name = f"{fixture} loop" + (", with memory" if memory else "")
        out = f"{tmp}/{fixture}{'-mem' if memory else ''}.rec"
        run([step_trace, "--out", out, "--start-offset", function_offset(program, "step_work"),
             "--count", str(args.count)] + (["--memory"] if memory else []) +
            ["--", program, "1000000000"])
        inputs.append(f"{name}={out}")
    # More rounds than 3 s need on any machine: step_trace ends the program at its duration, and
    # 150000 rounds took 2.6 s on one machine of this project's kind but 0.65 s on another.
    for name, argv, seconds in [("demo samples", [f"{build}/examples/demo", "0", "2000000"], 3),
                                ("chase samples", [f"{build}/examples/steploop_chase", "1000000000"], 2)]:
        out = f"{tmp}/{name.replace(' ', '-')}.rec"
        run([step_trace, "--out", out, "--sample", "1000", "--duration", str(seconds), "--"] + argv)
        inputs.append(f"{name}={out}")
    print(f"Command: `bench/codec_size.py --build {args.build} --count {args.count}`\n")
    print(run([codec_size] + inputs))
