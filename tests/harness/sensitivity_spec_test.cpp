// The spec of `moesim sensitivity` (harness/sensitivity_spec.cpp, contract in harness/sensitivity_job.h):
// the top level gives every point's defaults and a point overrides them; relative paths are the spec
// folder's while preset names stay names; a system's "policy=" parameter becomes its eviction; factors are
// numbers from 0.001 to 1000 other than 1; every error names the spec and the JSON path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "harness/sensitivity_job.h"
#include "tests/error_of.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

SensitivitySpec spec_of(const std::string& text) {
  return sensitivity_spec_from_json(Json::parse(text), "s.json", "/specs");
}

TEST(SensitivitySpec, PointsTakeTheTopLevelAsDefaultsAndOverrideThem) {
  const SensitivitySpec s = spec_of(R"({
    "trace": "traces/t.csv", "hw": "desktop-rtx4090", "model": "models/m.json", "budget": 8,
    "systems": ["offload:policy=lru", {"system": "offload", "policy": "lfu"}],
    "factors": [0.5, 3], "fields": ["budget"],
    "points": [{}, {"hw": "hw/board.json", "budget": "2GiB", "metric": "ttft", "batch": 4,
                    "systems": ["zipmoe", {"system": "offload", "label": "baseline"}]}]})");
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.factors, (std::vector<double>{0.5, 3}));
  EXPECT_EQ(s.fields, (std::vector<std::string>{"budget"}));
  const SensitivityPoint& a = s.points[0];
  EXPECT_EQ(a.trace, "/specs/traces/t.csv");
  EXPECT_EQ(a.model, "/specs/models/m.json");
  EXPECT_EQ(a.hw, "desktop-rtx4090");  // a preset name: not a path
  EXPECT_EQ(a.budget, "8");
  EXPECT_EQ(a.metric, "tpot");
  EXPECT_EQ(a.scope, "global");
  EXPECT_EQ(a.batch, 1u);
  ASSERT_EQ(a.systems.size(), 2u);
  EXPECT_EQ(a.systems[0].system.text(), "offload");
  EXPECT_EQ(a.systems[0].policy, "lru");
  EXPECT_EQ(a.systems[0].label, "offload:policy=lru");
  EXPECT_EQ(a.systems[1].system.text(), "offload");
  EXPECT_EQ(a.systems[1].policy, "lfu");
  EXPECT_EQ(a.systems[1].label, "offload --policy lfu");
  const SensitivityPoint& b = s.points[1];
  EXPECT_EQ(b.trace, "/specs/traces/t.csv");
  EXPECT_EQ(b.hw, "/specs/hw/board.json");
  EXPECT_EQ(b.budget, "2GiB");
  EXPECT_EQ(b.metric, "ttft");
  EXPECT_EQ(b.batch, 4u);
  ASSERT_EQ(b.systems.size(), 2u);
  EXPECT_EQ(b.systems[0].system.text(), "zipmoe");
  EXPECT_EQ(b.systems[0].policy, "");
  EXPECT_EQ(b.systems[1].label, "baseline");
}

TEST(SensitivitySpec, ASystemsOtherParametersStayItsOwn) {
  const SensitivitySpec s = spec_of(R"({"trace": "/t.csv", "budget": "4GiB",
    "systems": ["zipmoe:shards=4,policy=lfu,io=thread", "offload"]})");
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_EQ(s.points[0].systems[0].system.text(), "zipmoe:shards=4,io=thread");
  EXPECT_EQ(s.points[0].systems[0].policy, "lfu");
  EXPECT_EQ(s.points[0].trace, "/t.csv");  // absolute: as written
  EXPECT_TRUE(s.factors.empty());
  EXPECT_TRUE(s.fields.empty());
}

TEST(SensitivitySpec, FactorsAreNumbersFromAThousandthToAThousandOtherThanOne) {
  EXPECT_EQ(parse_factors("0.5,2", "--factors"), (std::vector<double>{0.5, 2}));
  EXPECT_EQ(parse_factors("0.001,1000", "--factors"), (std::vector<double>{0.001, 1000}));
  for (const char* bad : {"1", "0.5,1", "abc", "0.5,", "2000", "0.0001", "-2", "2x"})
    EXPECT_THAT(error_of([&] { (void)parse_factors(bad, "--factors"); }), HasSubstr("--factors: '")) << bad;
  EXPECT_THAT(error_of([&] { (void)parse_factors("0.5,1", "--factors"); }), HasSubstr("'1' is not a factor"));
}

TEST(SensitivitySpec, ErrorsNameTheSpecAndTheJsonPath) {
  const auto err = [](const std::string& text) { return error_of([&] { (void)spec_of(text); }); };
  const std::string ok = R"("trace": "t.csv", "budget": "4GiB", "systems": ["offload", "zipmoe"])";
  EXPECT_THAT(err("{" + ok + R"(, "metric": "speed"})"), HasSubstr("unknown metric 'speed' (known: tpot,"));
  EXPECT_THAT(err("{" + ok + R"(, "points": [{}, {"metric": "speed"}]})"),
              HasSubstr("s.json: points[1].metric: unknown metric"));
  EXPECT_THAT(err(R"({"trace": "t.csv", "budget": "4GiB", "systems": ["offload"]})"),
              HasSubstr("at least two systems"));
  EXPECT_THAT(err(R"({"trace": "t.csv", "budget": "4GiB", "systems": ["offload", "offload"]})"),
              HasSubstr("s.json: systems[1]: the same system twice: offload"));
  EXPECT_THAT(err(R"({"budget": "4GiB", "systems": ["offload", "zipmoe"]})"), HasSubstr("no \"trace\""));
  EXPECT_THAT(err(R"({"trace": "t.csv", "systems": ["offload", "zipmoe"]})"), HasSubstr("no \"budget\""));
  EXPECT_THAT(err(R"({"trace": "t.csv", "budget": "4GiB"})"), HasSubstr("no \"systems\""));
  EXPECT_THAT(err("{" + ok + R"(, "factors": [0.5, 1]})"), HasSubstr("a factor other than 1"));
  EXPECT_THAT(err("{" + ok + R"(, "factors": []})"), HasSubstr("a non-empty list of factors"));
  EXPECT_THAT(err("{" + ok + R"(, "fields": []})"), HasSubstr("a non-empty list of hardware fields"));
  EXPECT_THAT(err("{" + ok + R"(, "fields": ["ssd.colour"]})"),
              HasSubstr("'ssd.colour' is not a scalar field of a hardware profile"));
  EXPECT_THAT(err("{" + ok + R"(, "points": []})"), HasSubstr("a non-empty list of points"));
  EXPECT_THAT(err("{" + ok + R"(, "points": [{"factors": [2]}]})"), HasSubstr("factors"));
  EXPECT_THAT(err("{" + ok + R"(, "scope": "galaxy"})"), HasSubstr("galaxy"));
  EXPECT_THAT(err("{" + ok + R"(, "batch": 0})"), HasSubstr("batch"));
  EXPECT_THAT(err("{" + ok + R"(, "budgett": 1})"), HasSubstr("budgett"));
}

}  // namespace
}  // namespace moesim::harness
