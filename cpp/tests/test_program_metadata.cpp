// How a method's values are named in messages and descriptions
// (program/program_metadata.h): ExecuTorch's value tags as the C API's and as
// words, and the label of an input or output.
#include <gtest/gtest.h>

#include <string>

#include "program/program_metadata.h"

namespace {

using executorch::runtime::Tag;

TEST(ProgramMetadata, EveryExecuTorchTagHasACApiTagAndAName) {
  struct Case {
    Tag tag;
    TteValueTag value_tag;
    const char* name;
    const char* value_tag_name;
  } cases[] = {
      {Tag::None, TTE_VALUE_NONE, "none", "none"},
      {Tag::Tensor, TTE_VALUE_TENSOR, "tensor", "tensor"},
      {Tag::String, TTE_VALUE_OTHER, "string", "other"},
      {Tag::Double, TTE_VALUE_DOUBLE, "double", "double"},
      {Tag::Int, TTE_VALUE_INT, "int", "int"},
      {Tag::Bool, TTE_VALUE_BOOL, "bool", "bool"},
      {Tag::ListInt, TTE_VALUE_OTHER, "list", "other"},
      {Tag::ListTensor, TTE_VALUE_OTHER, "list", "other"},
      {Tag::ListOptionalTensor, TTE_VALUE_OTHER, "list", "other"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(tte::value_tag(c.tag), c.value_tag) << c.name;
    EXPECT_STREQ(tte::tag_name(c.tag), c.name);
    EXPECT_STREQ(tte::value_tag_name(tte::value_tag(c.tag)), c.value_tag_name) << c.name;
  }
  EXPECT_STREQ(tte::value_tag_name(static_cast<TteValueTag>(99)), "other");
}

TEST(ProgramMetadata, LabelsNameTheValueItsMethodAndItsName) {
  EXPECT_EQ(tte::io_label("forward", true, 0, ""), "input 0 of 'forward'");
  EXPECT_EQ(tte::io_label("decode", false, 2, "logits"), "output 2 of 'decode' ('logits')");
  // A name that is not printable text is shown escaped, never raw.
  const std::string label = tte::io_label("forward", true, 1, std::string("a\nb", 3));
  EXPECT_EQ(label.find('\n'), std::string::npos) << label;
  EXPECT_EQ(label.rfind("input 1 of 'forward' ('a", 0), 0u) << label;
}

}  // namespace
