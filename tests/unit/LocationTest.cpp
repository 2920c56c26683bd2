#include "target/Location.h"

#include <gtest/gtest.h>

using namespace strobe;

TEST(Location, LiteralAddressesAreDecimalOrHexAfterAStar) {
  EXPECT_EQ(literalAddress("*0x401000"), 0x401000u);
  EXPECT_EQ(literalAddress("*0X1f"), 31u);
  EXPECT_EQ(literalAddress("*4096"), 4096u);
  EXPECT_EQ(literalAddress("0x401000"), std::nullopt); // no star: a function name to resolve
  EXPECT_EQ(literalAddress("*"), std::nullopt);
  EXPECT_EQ(literalAddress("*0x"), std::nullopt);
  EXPECT_EQ(literalAddress("*main+4"), std::nullopt); // an expression, the debugger's to read
  EXPECT_EQ(literalAddress("*0x10zz"), std::nullopt);
}

TEST(Location, LineNumbersAreWholeNumbers) {
  EXPECT_EQ(parseLocationNumber("14"), 14u);
  EXPECT_EQ(parseLocationNumber(""), std::nullopt);
  EXPECT_EQ(parseLocationNumber("14a"), std::nullopt);
  EXPECT_EQ(parseLocationNumber("-1"), std::nullopt);
}

TEST(Location, AFunctionIsNeitherALineNorAnAddress) {
  EXPECT_TRUE(namesFunction("func_M"));
  EXPECT_TRUE(namesFunction("ns::Class::method")); // C++ scopes are not FILE:LINE
  EXPECT_FALSE(namesFunction("funcm.c:34"));
  EXPECT_FALSE(namesFunction("*0x401000"));
  EXPECT_FALSE(namesFunction(""));
}
