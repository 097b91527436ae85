#include "ste/json.h"

#include <string>

#include "gtest/gtest.h"

namespace ste {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

TEST(Json, EscapesControlAndQuotes) {
  EXPECT_EQ(Json("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
}

TEST(Json, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Json("caf\xC3\xA9"), "\"caf\xC3\xA9\"");
  EXPECT_EQ(Json("a\xFF" "b"), "\"a\xEF\xBF\xBD" "b\"");
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));      // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));  // surrogate
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));      // truncated
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));
}

TEST(Json, PathFieldAddsHexOnlyWhenNeeded) {
  std::string out;
  AppendJsonPathField("path", "/a b", &out);
  EXPECT_EQ(out, "\"path\":\"/a b\"");
  out.clear();
  AppendJsonPathField("path", "/x\xFE", &out);
  EXPECT_EQ(out, "\"path\":\"/x\xEF\xBF\xBD\",\"path_hex\":\"2f78fe\"");
}

TEST(Json, TextEscapingKeepsOnePathOnOneLine) {
  EXPECT_EQ(EscapeForText("/a\nb\\c\xFF"), "/a\\nb\\\\c\\xff");
  EXPECT_EQ(EscapeForText("/caf\xC3\xA9 x"), "/caf\xC3\xA9 x");
}

}  // namespace
}  // namespace ste
