#include "command/CommandLine.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace strobe {

std::string ParsedCommand::get(const std::string &name, std::string fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

double ParsedCommand::number(const std::string &name, double fallback, double min,
                             double max) const {
  auto it = values.find(name);
  if (it == values.end())
    return fallback;
  const std::string &text = it->second;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    throw UsageError(fmt::format("--{} expects a number, not '{}'", name, text));
  if (value < min || value > max)
    throw UsageError(fmt::format("--{} must be between {} and {}", name, min, max));
  return value;
}

uint64_t ParsedCommand::whole(const std::string &name, uint64_t fallback, uint64_t min,
                              uint64_t max) const {
  if (!has(name))
    return fallback;
  const double value = number(name, 0, -HUGE_VAL, HUGE_VAL);
  if (value != std::floor(value))
    throw UsageError(fmt::format("--{} expects a whole number, not '{}'", name, get(name)));
  // Compared as doubles: a value past 2^64 must not wrap into the range.
  if (value < static_cast<double>(min) || value > static_cast<double>(max))
    throw UsageError(fmt::format("--{} must be between {} and {}", name, min, max));
  return static_cast<uint64_t>(value);
}

std::optional<uint64_t> ParsedCommand::duration(const std::string &name) const {
  auto it = values.find(name);
  if (it == values.end())
    return std::nullopt;
  const std::string &text = it->second;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, text.data() + text.size() - end);
  double scale = unit == "" || unit == "s"      ? 1e9
                 : unit == "ms"                 ? 1e6
                 : unit == "us"                 ? 1e3
                 : unit == "m" || unit == "min" ? 60e9
                 : unit == "h"                  ? 3600e9
                                                : -1;
  if (ec != std::errc() || scale < 0 || !(value > 0) || !std::isfinite(value))
    throw UsageError(fmt::format(
        "--{} expects a positive duration such as 5, 2.5s, 500ms or 1m, not '{}'", name, text));
  return static_cast<uint64_t>(value * scale);
}

std::vector<std::string> splitWords(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < line.size())
        word += line[++i];
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      inWord = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      inWord = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (inWord)
        words.push_back(std::move(word));
      word.clear();
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote)
    throw UsageError("unterminated quote in the command line");
  if (inWord)
    words.push_back(std::move(word));
  return words;
}

namespace {

const OptionSpec *findLong(const SubcommandSpec &spec, std::string_view name) {
  for (const OptionSpec &o : spec.options)
    if (o.name == name)
      return &o;
  return nullptr;
}

const OptionSpec *findShort(const SubcommandSpec &spec, char name) {
  for (const OptionSpec &o : spec.options)
    if (o.shortName && o.shortName == name)
      return &o;
  return nullptr;
}

void storeValue(ParsedCommand &cmd, const OptionSpec &opt, std::string value) {
  if (!opt.choices.empty()) {
    bool known = false;
    for (const std::string &c : opt.choices)
      known = known || c == value;
    if (!known)
      throw UsageError(fmt::format("--{} must be one of {}, not '{}'", opt.name,
                                   fmt::join(opt.choices, ", "), value));
  }
  cmd.values[opt.name] = std::move(value);
}

} // namespace

size_t subcommandWords(std::string_view name, const std::vector<std::string> &words) {
  size_t n = 0;
  for (size_t at = 0; at <= name.size(); ++n) {
    size_t space = std::min(name.find(' ', at), name.size());
    if (n >= words.size() || words[n] != name.substr(at, space - at))
      return 0;
    at = space + 1;
  }
  return n;
}

std::vector<std::string> groupMembers(const std::vector<SubcommandSpec> &specs,
                                      std::string_view group) {
  std::vector<std::string> members;
  std::string prefix = std::string(group) + " ";
  for (const SubcommandSpec &s : specs)
    if (s.name.starts_with(prefix))
      members.push_back(s.name.substr(prefix.size()));
  return members;
}

namespace {

bool asksForHelp(const std::string &word) { return word == "--help" || word == "-h"; }

// The `help` subcommand for `topic` (a subcommand's name, or none), if the specs have it.
std::optional<ParsedCommand> helpRequest(const std::vector<SubcommandSpec> &specs,
                                         const std::string &topic) {
  auto help = std::ranges::find(specs, "help", &SubcommandSpec::name);
  if (help == specs.end())
    return std::nullopt;
  ParsedCommand cmd;
  cmd.spec = &*help;
  cmd.positionals = splitWords(topic);
  return cmd;
}

} // namespace

ParsedCommand parseCommand(const std::vector<SubcommandSpec> &specs,
                           const std::vector<std::string> &words, const Invocation &how) {
  if (words.empty())
    throw UsageError(fmt::format("missing subcommand; try '{}'", how.help));
  ParsedCommand cmd;
  size_t nameWords = 0;
  for (const SubcommandSpec &s : specs) {
    size_t n = subcommandWords(s.name, words);
    if (n > nameWords) {
      cmd.spec = &s;
      nameWords = n;
    }
  }
  // As in most command-line tools, `--help` or `-h` (before any `--`) asks for the help of the
  // subcommand or group typed: `strobe --help`, `strobe mem -h`, `strobe step --count 5 --help`.
  // An unknown subcommand stays an error.
  if (const auto ended = std::ranges::find(words, "--");
      std::any_of(words.begin(), ended, asksForHelp)) {
    std::optional<std::string> topic;
    if (cmd.spec)
      topic = cmd.spec->name;
    else if (!groupMembers(specs, words[0]).empty())
      topic = words[0];
    else if (asksForHelp(words[0]))
      topic = "";
    if (topic)
      if (auto help = helpRequest(specs, *topic))
        return *help;
  }
  if (!cmd.spec) {
    std::vector<std::string> group = groupMembers(specs, words[0]);
    if (!group.empty())
      throw UsageError(fmt::format("'{} {}' needs one of: {}; try '{} {}'", how.command, words[0],
                                   fmt::join(group, ", "), how.help, words[0]));
    throw UsageError(fmt::format("unknown subcommand '{}'; try '{}'", words[0], how.help));
  }
  const SubcommandSpec &spec = *cmd.spec;
  bool optionsEnded = false;
  for (size_t i = nameWords; i < words.size(); ++i) {
    const std::string &w = words[i];
    if (optionsEnded || w.size() < 2 || w[0] != '-' || (w[1] >= '0' && w[1] <= '9')) {
      cmd.positionals.push_back(w);
      continue;
    }
    if (w == "--") {
      optionsEnded = true;
      continue;
    }
    const OptionSpec *opt = nullptr;
    std::optional<std::string> inlineValue;
    if (w[1] == '-') {
      std::string name = w.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        inlineValue = name.substr(eq + 1);
        name.resize(eq);
      }
      opt = findLong(spec, name);
      if (!opt)
        throw UsageError(fmt::format("'{} {}' has no option --{}; try '{} {}'", how.command,
                                     spec.name, name, how.help, spec.name));
    } else {
      opt = findShort(spec, w[1]);
      if (!opt)
        throw UsageError(fmt::format("'{} {}' has no option -{}; try '{} {}'", how.command,
                                     spec.name, w[1], how.help, spec.name));
      if (w.size() > 2)
        inlineValue = w.substr(2);
    }
    if (opt->valueName.empty()) {
      if (inlineValue)
        throw UsageError(fmt::format("--{} takes no value", opt->name));
      cmd.values[opt->name] = "";
    } else if (inlineValue) {
      storeValue(cmd, *opt, *inlineValue);
    } else {
      if (i + 1 >= words.size())
        throw UsageError(fmt::format("--{} needs a value ({})", opt->name, opt->valueName));
      storeValue(cmd, *opt, words[++i]);
    }
  }
  if (cmd.positionals.size() < spec.minPositionals)
    throw UsageError(fmt::format("'{0} {1}' needs {2}; usage: {0} {1} {2}", how.command, spec.name,
                                 spec.positionals));
  if (cmd.positionals.size() > spec.maxPositionals)
    throw UsageError(fmt::format("'{} {}' does not take '{}'; try '{} {}'", how.command, spec.name,
                                 cmd.positionals[spec.maxPositionals], how.help, spec.name));
  return cmd;
}

std::string helpOverview(const std::vector<SubcommandSpec> &specs, const Invocation &how) {
  std::string out = fmt::format(
      "strobe: a sampling tracer inside your debugger\n\nUsage: {} SUBCOMMAND [OPTIONS]\n\n"
      "Subcommands:\n",
      how.command);
  for (const SubcommandSpec &s : specs)
    out += fmt::format("  {:<12} {}\n", s.name, s.summary);
  out += fmt::format("\n'{} SUBCOMMAND' describes one subcommand and its options.\n", how.help);
  return out;
}

std::string helpFor(const SubcommandSpec &spec, const Invocation &how) {
  std::string out = fmt::format("strobe {}: {}\n\nUsage: {} {}{}{}\n", spec.name, spec.summary,
                                how.command, spec.name, spec.options.empty() ? "" : " [OPTIONS]",
                                spec.positionals.empty() ? "" : " " + spec.positionals);
  if (!spec.details.empty())
    out += "\n" + spec.details + "\n";
  if (!spec.options.empty()) {
    out += "\nOptions:\n";
    for (const OptionSpec &o : spec.options) {
      std::string flag = (o.shortName ? fmt::format("-{}, ", o.shortName) : std::string("    ")) +
                         "--" + o.name + (o.valueName.empty() ? "" : " " + o.valueName);
      std::string help = o.help;
      if (!o.choices.empty())
        help += fmt::format(" ({})", fmt::join(o.choices, "|"));
      out += fmt::format("  {:<26} {}\n", flag, help);
    }
  }
  return out;
}

std::string helpTopic(const std::vector<SubcommandSpec> &specs,
                      const std::vector<std::string> &words, const Invocation &how) {
  if (words.empty())
    return helpOverview(specs, how);
  std::string topic = fmt::format("{}", fmt::join(words, " "));
  for (const SubcommandSpec &s : specs)
    if (s.name == topic)
      return helpFor(s, how);
  if (words.size() == 1) {
    std::string out;
    for (const SubcommandSpec &s : specs)
      if (s.name.starts_with(topic + " "))
        out += fmt::format("  {:<12} {}\n", s.name, s.summary);
    if (!out.empty())
      return fmt::format("strobe {0}: subcommands\n\n{1}\n'{2} {0} SUBCOMMAND' describes one.\n",
                         topic, out, how.help);
  }
  throw UsageError(fmt::format("no subcommand '{}'; try '{}'", topic, how.help));
}

} // namespace strobe
