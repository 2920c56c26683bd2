#include "command/Commands.h"

namespace strobe {
namespace {

std::vector<OptionSpec> samplingOptions() {
  return {
      {"frequency", 'F', "HZ", "samples per second, jittered by 10 % (default 199)", {}},
      {"overhead",
       0,
       "PCT",
       "how much strobe's stops may slow the process down, in percent; slow stops lower "
       "the rate below --frequency (default 25)",
       {}},
      {"stack",
       0,
       "N",
       "frames recorded per thread: 1 = pc only, 2 = pc and caller (default 2)",
       {}},
      {"output", 'o', "FILE", "stream the capture to this trace file as it runs", {}},
  };
}

std::vector<SubcommandSpec> build() {
  std::vector<SubcommandSpec> specs;
  specs.push_back({"help", "[SUBCOMMAND]", 0, 2, "describe strobe or one subcommand", "", {}});

  SubcommandSpec start{
      "start",
      "",
      0,
      0,
      "start sampling in the background; the prompt stays yours",
      "Arms sampling and, if the process is stopped, resumes it in the background.\n"
      "Sampling ends with 'strobe stop', or when the process stops for any other\n"
      "reason (a breakpoint, a signal, a crash, an exit): that stop reaches you\n"
      "exactly as it would without strobe.",
      samplingOptions()};
  start.options.push_back({"no-resume", 0, "", "arm only; sampling begins when you continue", {}});
  specs.push_back(start);

  specs.push_back({"stop", "", 0, 0, "stop sampling and keep the capture", "", {}});
  specs.push_back({"status", "", 0, 0, "what strobe is doing and what it holds", "", {}});

  SubcommandSpec record{
      "record",
      "",
      0,
      0,
      "sample until a duration, a sample count or a stop",
      "Blocks while the process runs and samples it, the form for batch runs\n"
      "(lldb -b, gdb -batch). Ends after --duration or --samples, at Ctrl-C, or\n"
      "when the process stops for another reason or exits; the samples taken are\n"
      "kept.",
      samplingOptions()};
  record.options.push_back(
      {"duration", 'd', "TIME", "stop after this long: 5, 2.5s, 500ms, 1m", {}});
  record.options.push_back({"samples", 'n', "N", "stop after N sample stops", {}});
  specs.push_back(record);

  specs.push_back(
      {"profile",
       "",
       0,
       0,
       "where the time went, by process, thread, module, function, line or instruction",
       "Each row: samples, share, estimated time (samples x period) and a 95 % interval.\n"
       "--wall (default) counts every thread at every stop, as poor man's profilers do;\n"
       "--cpu counts only threads that used the CPU since their previous sample (one found\n"
       "in a system call: for a tenth of that time or more).\n"
       "--folded prints one line per distinct stack, outermost caller first, as in\n"
       "'main;work;leaf 42': the input of flamegraph.pl, inferno and speedscope. --pprof\n"
       "writes the stacks, addresses and threads for 'pprof -http=: FILE'. Record with\n"
       "--stack 32 for stacks that reach main.",
       {{"by",
         'b',
         "VIEW",
         "what a row is (default function)",
         {"process", "thread", "module", "function", "line", "instruction"}},
        {"callers", 'c', "", "list each function's callers (frame 1; with --by function)", {}},
        {"cpu", 0, "", "on-CPU samples only", {}},
        {"wall", 0, "", "every sample, running or blocked (default)", {}},
        {"thread", 't', "TID", "only this thread", {}},
        {"top", 'n', "N", "at most N rows (default 25)", {}},
        {"json", 0, "", "JSON instead of a table", {}},
        {"folded", 0, "", "collapsed stacks for flame graphs instead of a table", {}},
        {"pprof", 0, "", "pprof's gzipped protobuf for pprof and Go's tools (needs --output)", {}},
        {"output", 'o', "FILE", "write the report to FILE instead of the console", {}}}});

  specs.push_back({"annotate",
                   "FUNCTION",
                   1,
                   1,
                   "samples per instruction or source line of one function",
                   "",
                   {{"asm", 0, "", "annotated disassembly (default)", {}},
                    {"source", 0, "", "annotated source lines", {}},
                    {"cpu", 0, "", "on-CPU samples only", {}}}});
  specs.push_back(
      {"step",
       "",
       0,
       0,
       "an exact instruction trace of the current thread, by single-stepping",
       "Steps the selected thread one instruction at a time (other threads stay stopped)\n"
       "and records every instruction with the registers it changed, as compact diff\n"
       "records (spec 001): the general registers and the vector and floating-point\n"
       "state (x86-64: SSE, AVX, x87; AArch64: v0-v31, fpsr, fpcr, tpidr).\n"
       "The trace joins the capture: 'strobe dump' prints it, 'strobe save' stores it.\n"
       "A breakpoint that stops, a watchpoint, a signal that stops, an exec, an exit or\n"
       "(LLDB) a fork on the way ends the trace and reaches you as usual (the trace\n"
       "keeps the instruction that triggered a watchpoint); so does a pending breakpoint\n"
       "in a library the trace loads. Ctrl-C ends it too, keeping the steps taken. A\n"
       "signal passed to the program without stopping is delivered and its handler\n"
       "stepped: the state the delivery left is a record of its own, shown '(after a\n"
       "gap)', not counted as an instruction. (GDB lets a thread the traced one creates\n"
       "run while it attaches to it.) A clock read in the kernel's vDSO may retry for\n"
       "ever under single steps (on a VM whose clock ticks faster than it steps): when a\n"
       "trace stays there, strobe runs the call to its return unstepped, a gap in the\n"
       "trace.",
       {{"count", 'n', "N", "instructions at most (default 1000; 1000000 with --until)", {}},
        {"until", 'u', "LOCATION", "step until the pc reaches FUNCTION, FILE:LINE or *ADDRESS", {}},
        {"memory", 'm', "", "also record the memory each instruction reads and writes", {}},
        {"quiet", 'q', "", "print only the summary, not each instruction", {}}}});
  specs.push_back(
      {"dump",
       "[FILE]",
       0,
       1,
       "print the decoded records of the capture or of a trace file",
       "One line per record: step traces instruction by instruction, samples one\n"
       "per thread per stop, each with the registers that changed.",
       {{"thread", 't', "TID", "only this thread", {}},
        {"tenet", 0, "", "Tenet's text trace format (step traces)", {}},
        {"output", 'o', "FILE", "write the records to FILE instead of the console", {}}}});
  specs.push_back(
      {"loop",
       "",
       0,
       0,
       "rebuild a loop's instruction order and time per instruction from samples",
       "Samples the running loop at full speed, splits the samples into iterations\n"
       "and merges them into one iteration's instruction trace (spec 000). With\n"
       "--mode time (default) each instruction carries the share of time spent on it.",
       {{"at", 'a', "LOCATION", "the loop: FUNCTION, FILE:LINE or *ADDRESS inside it", {}},
        {"hottest", 0, "", "the hottest loop of the current profile", {}},
        {"split",
         's',
         "HOW",
         "iterations from: auto (default: marker, or one partial sequence per sample "
         "when iterations are shorter than 4 sampling periods, as --overhead paces "
         "them), marker (a breakpoint at the loop head), expr:EXPR (a register or "
         "variable read at each sample), "
         "count:T (every T samples)",
         {}},
        {"iterations", 'i', "N", "capture until N iterations were sampled", {}},
        {"duration", 'd', "TIME", "capture for this long (default 2s)", {}},
        {"frequency", 'F', "HZ", "samples per second at most (default 997)", {}},
        {"overhead",
         0,
         "PCT",
         "how much the sample stops may slow the loop down, in percent (default 3, so the "
         "whole capture stays within 5 %): slow stops lower the rate below --frequency; a "
         "longer --duration makes up the samples",
         {}},
        {"mode", 0, "MODE", "score tables", {"time", "count", "bb"}},
        {"annotation",
         0,
         "KIND",
         "context (default): samples carry their call site, and the merged trace is "
         "walked through the code, which fills in the instructions no sample saw; "
         "pure: the spec's function + ordinal and its merge alone",
         {"context", "pure"}},
        {"verify", 0, "", "single-step one iteration and print the accuracy", {}},
        {"json", 0, "", "JSON instead of a listing", {}}}});
  specs.push_back(
      {"mem start",
       "",
       0,
       0,
       "track heap allocations with breakpoints on the allocator",
       "Hooks malloc, calloc, realloc, reallocarray, free, memalign, posix_memalign,\n"
       "aligned_alloc, valloc, pvalloc and C++ operator new / delete. Each event keeps\n"
       "its thread, time and call stack; tables attribute it to a library, function\n"
       "or thread at report time. Runs alongside sampling, in the same capture.",
       {{"functions", 'f', "LIST", "hook only these functions (comma-separated)", {}},
        {"mmap", 0, "", "also track anonymous mmap, munmap and mremap", {}},
        {"stack", 0, "N", "frames kept per event (default 16)", {}},
        {"transparent",
         0,
         "LIST",
         "allocator wrappers skipped when attributing (added to the built-in list)",
         {}}}});
  specs.push_back({"mem stop", "", 0, 0, "remove the allocator hooks; events are kept", "", {}});
  specs.push_back(
      {"mem table",
       "",
       0,
       0,
       "heap usage per library, function or thread",
       "Columns: size (net bytes), its minimum and maximum over time, calls per\n"
       "function, gross allocated and freed bytes, live blocks and bytes, peak live\n"
       "bytes and untracked frees, with a total row.",
       {{"by", 'b', "KEY", "what a row is (default library)", {"library", "function", "thread"}},
        {"attribution",
         'a',
         "MODE",
         "which frame owns an event: first library called from main (default), last caller, "
         "or all on the path",
         {"first", "last", "all"}},
        {"frees",
         0,
         "MODE",
         "charge a free to the code that called free (default) or to the allocation's owner",
         {"callsite", "owner"}},
        {"per", 0, "UNIT", "a new row whenever the key changes", {"invocation"}},
        {"interval", 'i', "TIME", "one table per time window, with cumulative usage", {}},
        {"sort", 's', "COLUMN", "order rows by this column (default size)", {}},
        {"json", 0, "", "JSON instead of a table", {}}}});
  specs.push_back({"mem leaks",
                   "",
                   0,
                   0,
                   "live blocks grouped by allocation stack",
                   "",
                   {{"top", 'n', "N", "at most N stacks (default 10)", {}},
                    {"json", 0, "", "JSON instead of a listing", {}}}});
  specs.push_back({"mem status", "", 0, 0, "what heap tracking hooks and has seen", "", {}});
  specs.push_back({"save", "FILE", 1, 1, "write the capture to a trace file", "", {}});
  specs.push_back({"load", "FILE", 1, 1, "read a trace file; reports then come from it", "", {}});
  return specs;
}

} // namespace

const std::vector<SubcommandSpec> &subcommands() {
  static const std::vector<SubcommandSpec> specs = build();
  return specs;
}

bool worksOffline(const std::string &name) {
  return name == "help" || name == "profile" || name == "annotate" || name == "load" ||
         name == "save" || name == "status" || name == "dump" || name == "loop" ||
         name == "mem table" || name == "mem leaks" || name == "mem status";
}

} // namespace strobe
