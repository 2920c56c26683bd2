// strobe-report: every report from a saved trace file, with no debugger.
//   strobe-report FILE [SUBCOMMAND [OPTIONS...]]      (SUBCOMMAND defaults to 'profile')
#include "command/Session.h"

#include <cstdio>
#include <string>

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
             "'strobe-report FILE help profile' lists the options of one.\n",
             to);
  return to == stdout ? 0 : 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usage(stderr);
  std::string first = argv[1];
  if (first == "-h" || first == "--help")
    return usage(stdout);

  strobe::Session session(nullptr, "strobe-report");
  std::string out;
  bool ok = session.execute("load " + quote(first), out);
  std::fputs(out.c_str(), stderr); // load messages and warnings are not the report
  if (!ok)
    return 1;

  std::string command = argc > 2 ? "" : "profile";
  for (int i = 2; i < argc; ++i)
    command += (command.empty() ? "" : " ") + quote(argv[i]);
  out.clear();
  ok = session.execute(command, out);
  std::fputs(out.c_str(), ok ? stdout : stderr);
  return ok ? 0 : 1;
}
