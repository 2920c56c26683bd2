// The README's command reference must agree with the engine's own command table.
#include "command/Commands.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace strobe;

TEST(Readme, CommandReferenceNamesEverySubcommandAndOption) {
  std::ifstream in(std::string(STROBE_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md not found";
  std::stringstream text;
  text << in.rdbuf();
  std::string readme = text.str();
  size_t reference = readme.find("## Command reference");
  ASSERT_NE(reference, std::string::npos);
  std::string section = readme.substr(reference, readme.find("\n## ", reference + 1) - reference);
  for (const SubcommandSpec &spec : subcommands()) {
    size_t row = section.find("| `strobe " + spec.name);
    ASSERT_NE(row, std::string::npos) << "README lacks a row for strobe " << spec.name;
    std::string line = section.substr(row, section.find('\n', row) - row);
    for (const OptionSpec &option : spec.options) {
      EXPECT_NE(line.find("--" + option.name), std::string::npos)
          << "README row of strobe " << spec.name << " lacks --" << option.name;
      EXPECT_NE(section.find("`--" + option.name), std::string::npos)
          << "README does not describe --" << option.name;
    }
  }
}
