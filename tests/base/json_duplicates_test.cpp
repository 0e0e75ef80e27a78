// Duplicate JSON object keys (base/json_io.h): every reader refuses them naming the file, the member's JSON
// path and both keys' LINE:COLUMN, because nlohmann alone keeps the last value and drops the first silently.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/json_io.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

using test::error_of;
using ::testing::HasSubstr;

TEST(JsonDuplicates, TopLevelKeyTwiceNamesPathAndBothPositions) {
  const std::string text =
      "{\n  \"grid\": {\"budget\": [1]},\n  \"command\": \"replay\",\n  \"grid\": {}\n}\n";
  EXPECT_EQ(
      error_of([&] { parse_json_text(text, "s.json"); }),
      "s.json: grid: the key appears twice in one object, at 2:3 and 4:3 (give it once: only one of the two "
      "values would be used)");
}

TEST(JsonDuplicates, NestedKeyIsNamedByItsPath) {
  const std::string text = R"({"servers": [{"hw": "a"}, {"model": "m", "hw": "a", "hw": "b"}]})";
  EXPECT_THAT(
      error_of([&] { parse_json_text(text, "SERVERS.json"); }),
      HasSubstr("SERVERS.json: servers[1].hw: the key appears twice in one object, at 1:42 and 1:53"));
}

TEST(JsonDuplicates, EscapedSpellingOfTheSameKeyIsTheSameKey) {
  EXPECT_THAT(error_of([&] { parse_json_text(R"({"a": 1, "\u0061": 2})", "x.json"); }),
              HasSubstr("x.json: a: the key appears twice in one object, at 1:2 and 1:10"));
}

TEST(JsonDuplicates, WideObjectPastTheShortListIsStillChecked) {
  std::string text = "{";
  for (int k = 0; k < 40; ++k) text += "\"k" + std::to_string(k) + "\": " + std::to_string(k) + ", ";
  text += "\"k3\": 0}";
  EXPECT_THAT(error_of([&] { parse_json_text(text, "w.json"); }),
              HasSubstr("w.json: k3: the key appears twice"));
}

TEST(JsonDuplicates, EqualKeysInDifferentObjectsAreFine) {
  const Json j = parse_json_text(
      R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}], "d": "\"x\", \"x\""})", "ok.json");
  EXPECT_EQ(j["c"][1]["x"], 4);
  EXPECT_FALSE(find_duplicate_key(R"([{"x": 1}, {"x": 2}])"));
}

TEST(JsonDuplicates, FirstLineShiftsTheReportedLines) {
  EXPECT_THAT(error_of([&] { parse_json_text(R"({"e": [1], "e": [2]})", "t.jsonl", 7); }),
              HasSubstr("t.jsonl: e: the key appears twice in one object, at 7:2 and 7:12"));
}

TEST(JsonDuplicates, FindDuplicateKeyReportsByteOffsets) {
  const auto d = find_duplicate_key(R"({"a": {"b": [1, {"c": 1, "c": 2}]}})");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->path, "a.b[1].c");
  EXPECT_EQ(d->first, 17u);
  EXPECT_EQ(d->second, 25u);
}

}  // namespace
}  // namespace moesim
