// Binding by engine I/O names when a blob lists no io_bindings.
#include "blob/binding_names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tte {
namespace {

TEST(BindingNames, ParsesTheIndexAfterTheLastDotOrUnderscore) {
  EXPECT_EQ(parse_binding_index("input.0"), 0u);
  EXPECT_EQ(parse_binding_index("input_0"), 0u);
  EXPECT_EQ(parse_binding_index("output_12"), 12u);
  EXPECT_EQ(parse_binding_index("output.1"), 1u);
  EXPECT_EQ(parse_binding_index("profile.input_3"), 3u);
  EXPECT_EQ(parse_binding_index("a_b.c_7"), 7u);
  EXPECT_EQ(parse_binding_index("_5"), 5u);
  EXPECT_EQ(parse_binding_index("input_007"), 7u);
  EXPECT_EQ(parse_binding_index("x_18446744073709551615"), 18446744073709551615u);
}

TEST(BindingNames, RejectsMissingOrInvalidSuffixes) {
  for (const char* name : {"input", "input.", "input_", "input.foo", "input.3x", "", "_",
                           "input_-1", "input_+1", "input_ 1", "input_1 ", "input_0x1", "input_1.",
                           "input_1_", "in\xc3\xa9_\xd9\xa3", "x_18446744073709551616"}) {
    EXPECT_FALSE(parse_binding_index(name).has_value()) << "'" << name << "'";
  }
}

TEST(BindingNames, OrdersInputsAndOutputsByIndexWhateverTheEngineOrder) {
  const auto result = order_binding_names({{"output_1", false},
                                           {"input_1", true},
                                           {"output.0", false},
                                           {"profile.input_2", true},
                                           {"input_0", true}});
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().inputs,
            (std::vector<std::string>{"input_0", "input_1", "profile.input_2"}));
  EXPECT_EQ(result.value().outputs, (std::vector<std::string>{"output.0", "output_1"}));
}

TEST(BindingNames, AnEngineWithNoIoGivesEmptyLists) {
  const auto result = order_binding_names({});
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_TRUE(result.value().inputs.empty());
  EXPECT_TRUE(result.value().outputs.empty());
}

TEST(BindingNames, RejectsANameWithoutAnIndex) {
  const auto result = order_binding_names({{"input_0", true}, {"logits", false}});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("engine output 'logits' has none"), std::string::npos)
      << result.error();
}

TEST(BindingNames, RejectsDuplicateIndices) {
  const auto result =
      order_binding_names({{"input_0", true}, {"other_0", true}, {"output_0", false}});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("engine inputs 'input_0' and 'other_0' both have index 0"),
            std::string::npos)
      << result.error();
  // Leading zeros do not make a different index.
  EXPECT_FALSE(
      order_binding_names({{"output_1", false}, {"output_01", false}, {"output_0", false}}).ok());
}

TEST(BindingNames, InputsAndOutputsAreIndexedSeparately) {
  const auto result = order_binding_names({{"x_0", true}, {"x.0", false}});
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value().inputs, std::vector<std::string>{"x_0"});
  EXPECT_EQ(result.value().outputs, std::vector<std::string>{"x.0"});
}

TEST(BindingNames, RejectsGaps) {
  const auto missing_first = order_binding_names({{"input_1", true}});
  ASSERT_FALSE(missing_first.ok());
  EXPECT_NE(
      missing_first.error().find("engine has 1 inputs but none with index 0 (next is 'input_1')"),
      std::string::npos)
      << missing_first.error();
  const auto missing_middle =
      order_binding_names({{"out_0", false}, {"out_2", false}, {"in_0", true}});
  ASSERT_FALSE(missing_middle.ok());
  EXPECT_NE(missing_middle.error().find("2 outputs but none with index 1"), std::string::npos)
      << missing_middle.error();
}

TEST(BindingNames, AHugeIndexIsAGapNotAnAllocation) {
  // An index is never used to size anything.
  const auto result =
      order_binding_names({{"input_0", true}, {"input_18446744073709551615", true}});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("none with index 1"), std::string::npos) << result.error();
}

}  // namespace
}  // namespace tte
