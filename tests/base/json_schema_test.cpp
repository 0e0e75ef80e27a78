// The JSON reading helpers every input reader shares: parse errors name the file with line and column, a
// number out of a double's range is an Error (not nlohmann's out_of_range), and JsonAt's accessors name the
// file, the JSON path, what was expected and what was found.
#include "base/json_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/json_io.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

using ::testing::HasSubstr;
using test::error_of;

TEST(JsonIo, ANumberBeyondADoubleIsAnErrorNamingTheFileLineAndColumn) {
  const std::string e = error_of([] { (void)parse_json_text("{\n  \"a\": [1,\n 1e400]}", "p.json"); });
  EXPECT_THAT(e, HasSubstr("p.json:3:2: the number 1e400 is out of range"));
  EXPECT_THAT(error_of([] { (void)parse_json_text("-1e999", "q.json"); }), HasSubstr("q.json:1:1:"));
}

TEST(JsonIo, ASyntaxErrorNamesLineAndColumn) {
  const std::string e = error_of([] { (void)parse_json_text("{\"a\": 1,\n \"b\" 2}", "s.json"); });
  EXPECT_THAT(e, HasSubstr("s.json: not valid JSON at 2:6: "));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("[json.exception")));
}

TEST(JsonAt, AccessorsNameThePathWhatWasExpectedAndWhatWasFound) {
  const Json j = Json::parse(R"({"ssd": {"read_bandwidth": {"value": "fast"}, "depth": 1.5},
                                 "points": [{"budget": -2}], "n": 4096.0, "b": "yes"})");
  const JsonAt root(j, "hw.json");
  EXPECT_EQ(error_of([&] { (void)root["ssd"]["read_bandwidth"]["value"].number(); }),
            "hw.json: ssd.read_bandwidth.value: expected a finite number, found the string \"fast\"");
  EXPECT_EQ(error_of([&] { (void)root["points"][0]["budget"].integer(); }),
            "hw.json: points[0].budget: expected an integer >= 0, found the number -2");
  EXPECT_EQ(error_of([&] { (void)root["ssd"]["depth"].integer(1, 64); }),
            "hw.json: ssd.depth: expected an integer in [1, 64], found the number 1.5");
  EXPECT_EQ(root["n"].integer(), 4096u);
  const Json built = {{"cores", 2}};  // a signed integer, as code (not the parser) makes it
  EXPECT_EQ(JsonAt(built, "b.json")["cores"].integer(1, 8), 2u);
  EXPECT_EQ(error_of([&] { (void)root["ssd"]["latency"]; }), "hw.json: ssd.latency: missing field");
  EXPECT_EQ(error_of([&] { (void)root["points"][3]; }),
            "hw.json: points: expected an element 3, found an array of 1 element");
  EXPECT_EQ(error_of([&] { (void)root["b"].boolean(); }), "hw.json: b: expected true or false, found the string \"yes\"");
  EXPECT_EQ(error_of([&] { (void)root["b"].string_of({"uma", "pcie"}); }),
            "hw.json: b: expected \"uma\" or \"pcie\", found the string \"yes\"");
  EXPECT_EQ(error_of([&] { root["points"].object(); }), "hw.json: points: expected an object, found an array of 1 element");
  const Json arr = Json::parse("[1]");
  EXPECT_EQ(error_of([&] { JsonAt(arr, "a.json").object(); }), "a.json: expected an object, found an array of 1 element");
}

TEST(JsonAt, AnUnknownKeyIsAnErrorNamingTheClosestKnownOne) {
  const Json j = Json::parse(R"({"ssd": {"prefill_read_bandwith": 1}})");
  const JsonAt ssd = JsonAt(j, "hw.json")["ssd"];
  EXPECT_EQ(error_of([&] { ssd.only_keys({"read_bandwidth", "prefill_read_bandwidth", "queue_depth"}); }),
            "hw.json: ssd.prefill_read_bandwith: unknown field; did you mean ssd.prefill_read_bandwidth?");
  // Nothing near: the known keys are listed instead.
  EXPECT_EQ(error_of([&] { ssd.only_keys({"model", "depth"}); }),
            "hw.json: ssd.prefill_read_bandwith: unknown field (known: model, depth)");
}

TEST(JsonAt, EditDistanceAndClosestName) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("top_k", "top_k"), 0u);
  EXPECT_EQ(closest_name("budgte", {"budget", "batch", "seed"}), "budget");
  EXPECT_EQ(closest_name("colour", {"budget", "batch", "seed"}), std::nullopt);
}

}  // namespace
}  // namespace moesim
