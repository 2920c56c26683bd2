// strobe-report: every report from a saved trace file, with no debugger.
//   strobe-report FILE [SUBCOMMAND [OPTIONS...]]      (SUBCOMMAND defaults to 'profile')
//   strobe-report help [SUBCOMMAND], strobe-report FILE SUBCOMMAND --help (FILE not read)
#include "command/Session.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace {

std::string quote(const std::string &word) {
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int usage(FILE *to) {
  std::fputs("usage: strobe-report FILE [SUBCOMMAND [OPTIONS...]]\n"
             "Prints strobe's reports from a trace file written by 'strobe save'.\n"
             "SUBCOMMAND is one of profile (default), annotate, dump, mem table, mem leaks,\n"
             "mem status, loop, status, help;\n"
             "'strobe-report help profile' lists the options of one.\n",
             to);
  return to == stdout ? 0 : 2;
}

// The words from argv[from] on, as one command line for the session's parser.
std::string commandLine(int argc, char **argv, int from) {
  std::string command;
  for (int i = from; i < argc; ++i)
    command += (command.empty() ? "" : " ") + quote(argv[i]);
  return command;
}

int run(strobe::Session &session, const std::string &command) {
  std::string out;
  bool ok = session.execute(command, out);
  std::fputs(out.c_str(), ok ? stdout : stderr);
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usage(stderr);
  std::string first = argv[1];
  if (first == "-h" || first == "--help")
    return usage(stdout);

  strobe::Session session(nullptr, "strobe-report");
  // Help needs no trace file: 'help [SUBCOMMAND]' (unless a file is called "help"), or --help
  // after the file or its subcommand, which the subcommand answers.
  if (first == "help" && !std::filesystem::exists(first))
    return run(session, commandLine(argc, argv, 1));
  const auto isHelp = [](std::string_view word) { return word == "--help" || word == "-h"; };
  if (argc > 2 && isHelp(argv[2]))
    return usage(stdout);
  if (std::any_of(argv + 2, argv + argc, isHelp))
    return run(session, commandLine(argc, argv, 2));

  std::string out;
  bool ok = session.execute("load " + quote(first), out);
  std::fputs(out.c_str(), stderr); // load messages and warnings are not the report
  if (!ok)
    return 1;
  return run(session, argc > 2 ? commandLine(argc, argv, 2) : "profile");
}
