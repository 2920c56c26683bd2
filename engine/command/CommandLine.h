// The one parser for `strobe` command lines: subcommand specs, options, help text.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strobe {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;      // long name without dashes: "frequency"
  char shortName = 0;    // 'f', or 0
  std::string valueName; // "HZ"; empty for a flag
  std::string help;
  std::vector<std::string> choices; // allowed values, when the option takes one of a set
};

struct SubcommandSpec {
  std::string name;        // one word, or a group and a word: "mem table"
  std::string positionals; // usage text of positional arguments: "FILE", "[FUNCTION]"
  size_t minPositionals = 0;
  size_t maxPositionals = 0;
  std::string summary; // one line
  std::string details; // paragraphs for `strobe help NAME`
  std::vector<OptionSpec> options;
};

struct ParsedCommand {
  const SubcommandSpec *spec = nullptr;
  std::map<std::string, std::string> values; // option name -> value ("" for flags)
  std::vector<std::string> positionals;

  bool has(const std::string &name) const { return values.count(name) != 0; }
  std::string get(const std::string &name, std::string fallback = {}) const;
  double number(const std::string &name, double fallback, double min, double max) const;
  // Like number(), for a count or an id: 1.5 is refused rather than cut to 1.
  uint64_t whole(const std::string &name, uint64_t fallback, uint64_t min, uint64_t max) const;
  // "2s", "500ms", "1.5" (seconds), "1m" -> nanoseconds
  std::optional<uint64_t> duration(const std::string &name) const;
};

// Splits a command line into words; quotes (' and ") group, backslash escapes.
std::vector<std::string> splitWords(std::string_view line);

// How many of `words` a subcommand name spells ("mem table" spells two), or 0 when they do not
// begin with it.
size_t subcommandWords(std::string_view name, const std::vector<std::string> &words);
// The second words of a subcommand group ("mem" -> start, stop, table, ...); empty if no group.
std::vector<std::string> groupMembers(const std::vector<SubcommandSpec> &specs,
                                      std::string_view group);

// How the user types a subcommand, so that errors and help name what can be typed: in a debugger
// `strobe profile`, offline `strobe-report FILE profile` and `strobe-report help profile`.
struct Invocation {
  std::string command; // what comes before a subcommand
  std::string help;    // what comes before a help topic
};
inline const Invocation kInDebugger{"strobe", "strobe help"};

// Subcommand names may have two words ("mem start"); the longest name the words begin with wins.
ParsedCommand parseCommand(const std::vector<SubcommandSpec> &specs,
                           const std::vector<std::string> &words,
                           const Invocation &how = kInDebugger);

std::string helpOverview(const std::vector<SubcommandSpec> &specs,
                         const Invocation &how = kInDebugger);
std::string helpFor(const SubcommandSpec &spec, const Invocation &how = kInDebugger);
// `strobe help WORDS...`: the overview, one subcommand, or the members of a group ("mem").
std::string helpTopic(const std::vector<SubcommandSpec> &specs,
                      const std::vector<std::string> &words, const Invocation &how = kInDebugger);

} // namespace strobe
