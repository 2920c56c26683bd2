#include "command/CommandLine.h"
#include "command/Commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

using namespace strobe;

namespace {

ParsedCommand parse(const std::string &line) {
  return parseCommand(subcommands(), splitWords(line));
}

std::string usageError(const std::string &line) {
  try {
    parse(line);
  } catch (const UsageError &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST(SplitWords, QuotesAndEscapesGroupWords) {
  EXPECT_EQ(splitWords("save  'my file.strobe'"),
            (std::vector<std::string>{"save", "my file.strobe"}));
  EXPECT_EQ(splitWords(R"(load "a \"b\" c" d\ e)"),
            (std::vector<std::string>{"load", "a \"b\" c", "d e"}));
  EXPECT_EQ(splitWords("   "), std::vector<std::string>{});
  EXPECT_THROW(splitWords("save 'unterminated"), UsageError);
}

TEST(ParseCommand, LongShortAndInlineValues) {
  ParsedCommand cmd = parse("record --frequency 500 -d 2s --stack=4");
  EXPECT_EQ(cmd.spec->name, "record");
  EXPECT_DOUBLE_EQ(cmd.number("frequency", 0, 1, 10000), 500);
  EXPECT_EQ(cmd.duration("duration"), 2'000'000'000u);
  EXPECT_DOUBLE_EQ(cmd.number("stack", 0, 1, 64), 4);
  EXPECT_FALSE(cmd.has("samples"));
  EXPECT_DOUBLE_EQ(parse("record -F250").number("frequency", 0, 1, 10000), 250);
}

TEST(ParseCommand, DurationsTakeUnits) {
  EXPECT_EQ(parse("record -d 500ms").duration("duration"), 500'000'000u);
  EXPECT_EQ(parse("record -d 1.5").duration("duration"), 1'500'000'000u);
  EXPECT_EQ(parse("record -d 1m").duration("duration"), 60'000'000'000u);
  EXPECT_THROW(parse("record -d 5parsecs").duration("duration"), UsageError);
  EXPECT_THROW(parse("record -d 0").duration("duration"), UsageError);
  EXPECT_THROW(parse("record -d -3").duration("duration"), UsageError);
}

TEST(ParseCommand, ChoicesAreChecked) {
  EXPECT_EQ(parse("profile --by line").get("by"), "line");
  EXPECT_EQ(usageError("profile --by colour"),
            "--by must be one of process, thread, module, function, line, instruction, not "
            "'colour'");
}

TEST(ParseCommand, ErrorsNameTheProblem) {
  EXPECT_EQ(usageError(""), "missing subcommand; try 'strobe help'");
  EXPECT_EQ(usageError("frobnicate"), "unknown subcommand 'frobnicate'; try 'strobe help'");
  EXPECT_EQ(usageError("record --bogus"),
            "'strobe record' has no option --bogus; try 'strobe help record'");
  EXPECT_EQ(usageError("record -q"), "'strobe record' has no option -q; try 'strobe help record'");
  EXPECT_EQ(usageError("record --frequency"), "--frequency needs a value (HZ)");
  EXPECT_EQ(usageError("profile --json=yes"), "--json takes no value");
  EXPECT_EQ(usageError("save"), "'strobe save' needs FILE; usage: strobe save FILE");
  EXPECT_EQ(usageError("save a b"), "'strobe save' does not take 'b'; try 'strobe help save'");
}

TEST(ParseCommand, NumbersAreValidated) {
  EXPECT_THROW(parse("record -F abc").number("frequency", 1, 1, 10000), UsageError);
  EXPECT_THROW(parse("record -F 0").number("frequency", 1, 1, 10000), UsageError);
  EXPECT_THROW(parse("record -F 20000").number("frequency", 1, 1, 10000), UsageError);
  EXPECT_DOUBLE_EQ(parse("record").number("frequency", 199, 1, 10000), 199);
}

TEST(ParseCommand, CountsAreWholeNumbers) {
  auto wholeError = [](const char *line) {
    try {
      parse(line).whole("samples", 0, 1, 1000000000);
    } catch (const UsageError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(parse("record --samples 300").whole("samples", 0, 1, 1000000000), 300u);
  EXPECT_EQ(parse("record --samples 1e3").whole("samples", 0, 1, 1000000000), 1000u);
  EXPECT_EQ(parse("record").whole("samples", 7, 1, 1000000000), 7u);
  EXPECT_EQ(wholeError("record --samples 2.9"), "--samples expects a whole number, not '2.9'");
  EXPECT_EQ(wholeError("record --samples 0"), "--samples must be between 1 and 1000000000");
  EXPECT_EQ(wholeError("record --samples 1e30"), "--samples must be between 1 and 1000000000");
  EXPECT_EQ(wholeError("record --samples x"), "--samples expects a number, not 'x'");
}

TEST(ParseCommand, DurationsTakeHours) {
  EXPECT_EQ(parse("record -d 1h").duration("duration"), 3'600'000'000'000u);
}

TEST(ParseCommand, DoubleDashEndsOptions) {
  ParsedCommand cmd = parse("save -- --odd-name");
  ASSERT_EQ(cmd.positionals.size(), 1u);
  EXPECT_EQ(cmd.positionals[0], "--odd-name");
}

TEST(Help, OverviewListsEverySubcommandAndDetailListsOptions) {
  std::string overview = helpOverview(subcommands());
  for (const char *name :
       {"start", "stop", "status", "record", "profile", "annotate", "save", "load"})
    EXPECT_NE(overview.find(std::string("  ") + name + " "), std::string::npos) << name;
  const SubcommandSpec *record = nullptr;
  for (const SubcommandSpec &s : subcommands())
    if (s.name == "record")
      record = &s;
  ASSERT_NE(record, nullptr);
  std::string detail = helpFor(*record);
  EXPECT_NE(detail.find("Usage: strobe record [OPTIONS]"), std::string::npos);
  EXPECT_NE(detail.find("-d, --duration TIME"), std::string::npos);
  EXPECT_NE(detail.find("-F, --frequency HZ"), std::string::npos);
}

TEST(ParseCommand, GroupSubcommandsTakeTwoWords) {
  ParsedCommand cmd = parse("mem table --by function -a last");
  EXPECT_EQ(cmd.spec->name, "mem table");
  EXPECT_EQ(cmd.get("by"), "function");
  EXPECT_EQ(cmd.get("attribution"), "last");
  EXPECT_TRUE(cmd.positionals.empty());
  EXPECT_EQ(usageError("mem"),
            "'strobe mem' needs one of: start, stop, table, leaks, status; try 'strobe help mem'");
  EXPECT_EQ(usageError("mem tables"),
            "'strobe mem' needs one of: start, stop, table, leaks, status; try 'strobe help mem'");
  EXPECT_EQ(usageError("mem start --by library"),
            "'strobe mem start' has no option --by; try 'strobe help mem start'");
}

TEST(Help, GroupsListTheirMembersAndEachMemberHasItsOwnPage) {
  std::string group = helpTopic(subcommands(), {"mem"});
  EXPECT_NE(group.find("mem leaks"), std::string::npos);
  EXPECT_NE(group.find("'strobe help mem SUBCOMMAND'"), std::string::npos);
  EXPECT_EQ(group.find("profile"), std::string::npos);
  std::string member = helpTopic(subcommands(), {"mem", "table"});
  EXPECT_NE(member.find("Usage: strobe mem table [OPTIONS]"), std::string::npos);
  EXPECT_NE(member.find("--attribution MODE"), std::string::npos);
  EXPECT_THROW(helpTopic(subcommands(), {"mem", "nope"}), UsageError);
  EXPECT_THROW(helpTopic(subcommands(), {"nope"}), UsageError);
}

TEST(Help, DashDashHelpAsksForTheHelpOfWhatWasTyped) {
  auto helpTopicOf = [](const std::string &line) {
    const ParsedCommand cmd = parse(line);
    EXPECT_EQ(cmd.spec->name, "help") << line;
    return fmt::format("{}", fmt::join(cmd.positionals, " "));
  };
  EXPECT_EQ(helpTopicOf("--help"), "");
  EXPECT_EQ(helpTopicOf("-h"), "");
  EXPECT_EQ(helpTopicOf("step --help"), "step");
  EXPECT_EQ(helpTopicOf("step --count 5 -h"), "step");
  EXPECT_EQ(helpTopicOf("dump trace.strobe --tenet --help"), "dump");
  EXPECT_EQ(helpTopicOf("mem table --by library -h"), "mem table");
  EXPECT_EQ(helpTopicOf("mem --help"), "mem");
  EXPECT_EQ(helpTopicOf("step --bogus --help"), "step"); // help before complaining
  // After `--` it is a word like any other.
  EXPECT_EQ(parse("save -- --help").positionals, std::vector<std::string>{"--help"});
  EXPECT_EQ(usageError("frobnicate --help"), "unknown subcommand 'frobnicate'; try 'strobe help'");
}
