#!/usr/bin/env bash
# The demo: builds strobe, samples the bundled example program in LLDB and in GDB, and prints the
# reports; then prints the same profile from the saved trace file with no debugger.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
build="$(cd "${STROBE_BUILD_DIR:-build}" && pwd)"
demo="$build/examples/demo"
out="$(mktemp -d)"

echo "=== LLDB: strobe inside lldb-19 on $demo"
lldb-19 -b --no-lldbinit -o "plugin load $build/lldb-plugin/libstrobe_lldb.so" \
  -o "breakpoint set -n main" -o run -o "breakpoint delete 1" \
  -o "strobe record --duration 3 --frequency 1000" \
  -o "strobe profile --by module" -o "strobe profile --by function --callers" \
  -o "strobe profile --by line --top 8" -o "strobe annotate compute_sixty --source" \
  -o "strobe save $out/demo-lldb.strobe" -o "process kill" -- "$demo" 10

echo
echo "=== GDB: the same inside gdb"
gdb -nx -batch -ex "source $build/gdb-ext/strobe.py" -ex "break main" -ex run -ex "delete 1" \
  -ex "strobe record --duration 3 --frequency 1000 --stack 16" -ex "strobe profile --by function" \
  -ex "strobe annotate compute_sixty" -ex "strobe save $out/demo-gdb.strobe" -ex kill \
  --args "$demo" 10

echo
echo "=== strobe-report: the LLDB capture again, from the file, with no debugger"
"$build/tools/strobe-report" "$out/demo-lldb.strobe" profile --by function
echo
echo "=== strobe-report: the GDB capture's whole stacks, folded for a flame graph"
"$build/tools/strobe-report" "$out/demo-gdb.strobe" profile --folded --output "$out/demo.folded"
head -n 4 "$out/demo.folded"
echo "(flamegraph.pl $out/demo.folded > demo.svg draws it; trace files kept in $out)"
