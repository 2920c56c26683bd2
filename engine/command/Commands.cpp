#include "command/Commands.h"

namespace strobe {
namespace {

std::vector<OptionSpec> samplingOptions() {
  return {
      {"frequency", 'F', "HZ", "samples per second, jittered by 10 % (default 199)", {}},
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
  specs.push_back({"help", "[SUBCOMMAND]", 0, 1, "describe strobe or one subcommand", "", {}});

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

  SubcommandSpec record{"record",
                        "",
                        0,
                        0,
                        "sample until a duration, a sample count or a stop",
                        "Blocks while the process runs and samples it, the form for batch runs\n"
                        "(lldb -b, gdb -batch). Ends after --duration or --samples, or when the\n"
                        "process stops for another reason or exits; the samples taken are kept.",
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
       "--cpu counts only threads that used the CPU since their previous sample.",
       {{"by",
         'b',
         "VIEW",
         "what a row is (default function)",
         {"process", "thread", "module", "function", "line", "instruction"}},
        {"callers", 'c', "", "list each function's callers (frame 1)", {}},
        {"cpu", 0, "", "on-CPU samples only", {}},
        {"wall", 0, "", "every sample, running or blocked (default)", {}},
        {"thread", 't', "TID", "only this thread", {}},
        {"top", 'n', "N", "at most N rows (default 25)", {}},
        {"json", 0, "", "JSON instead of a table", {}}}});

  specs.push_back({"annotate",
                   "FUNCTION",
                   1,
                   1,
                   "samples per instruction or source line of one function",
                   "",
                   {{"asm", 0, "", "annotated disassembly (default)", {}},
                    {"source", 0, "", "annotated source lines", {}},
                    {"cpu", 0, "", "on-CPU samples only", {}}}});
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
         name == "save" || name == "status";
}

} // namespace strobe
