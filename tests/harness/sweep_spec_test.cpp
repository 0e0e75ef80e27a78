// The sweep spec (harness/sweep_spec.h): the grid's points are the cross product of its lists, looped in the
// fixed key order, then the explicit points; a point's command line and id depend on its parameters only;
// the hash ignores key order and whitespace; the merged CSV has one row per finished point in spec order,
// the metrics read from where each command has them; every error names the file and the JSON path.
#include "harness/sweep_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "tests/error_of.h"

namespace moesim::harness::sweep {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using ::testing::HasSubstr;

Spec spec_of(const std::string& text) {
  return spec_from_json(Json::parse(text), "spec.json", ".");
}

TEST(SweepSpec, TheGridIsTheCrossProductInKeyOrderThenThePoints) {
  // Written budget first: the loops still run in the fixed order (trace, policy, budget), budget innermost.
  const Spec s = spec_of(R"({"grid": {"budget": ["2", "4"], "policy": ["lru", "lfu", "belady"],
                                      "trace": ["t.csv"]},
                             "points": [{"trace": "u.csv", "budget": "8GiB"}],
                             "options": ["--io-depth", "4"]})");
  ASSERT_EQ(s.points.size(), 3u * 2u + 1u);
  EXPECT_EQ(s.points[0], (Point{{"command", "run"}, {"trace", "t.csv"}, {"policy", "lru"}, {"budget", "2"}}));
  EXPECT_EQ(s.points[1].at("budget"), "4");
  EXPECT_EQ(s.points[1].at("policy"), "lru");
  EXPECT_EQ(s.points[2].at("policy"), "lfu");
  EXPECT_EQ(s.points[5].at("policy"), "belady");
  EXPECT_EQ(s.points[5].at("budget"), "4");
  EXPECT_EQ(s.points[6], (Point{{"command", "run"}, {"trace", "u.csv"}, {"budget", "8GiB"}}));
  EXPECT_EQ(point_args(s, s.points[0]),
            (std::vector<std::string>{"run", "--trace", "t.csv", "--policy", "lru", "--budget", "2",
                                      "--io-depth", "4"}));
}

TEST(SweepSpec, APointsIdDependsOnItsParametersOnly) {
  const Spec a = spec_of(R"({"grid": {"trace": ["t.csv"], "budget": ["2", "4"]}})");
  const Spec b = spec_of(R"({"points": [{"budget": "4", "trace": "t.csv"}]})");
  EXPECT_EQ(point_id(a, a.points[1]), point_id(b, b.points[0]));  // index and spec differ, parameters not
  EXPECT_NE(point_id(a, a.points[0]), point_id(a, a.points[1]));
  EXPECT_EQ(point_id(a, a.points[0]).size(), 16u);
  EXPECT_TRUE(is_point_file(point_file("out", point_id(a, a.points[0]))));
  EXPECT_FALSE(is_point_file("out/points/" + point_id(a, a.points[0]) + ".json.tmp"));
  EXPECT_FALSE(is_point_file("out/points/manifest.json"));
  // The spec's hash: key order and whitespace do not change it, a value does.
  const Spec c = spec_of(R"({ "grid" : { "budget": ["2", "4"], "trace": ["t.csv"] } })");
  const Spec d = spec_of(R"({"grid": {"trace": ["t.csv"], "budget": ["2", "8"]}})");
  EXPECT_EQ(a.hash, c.hash);
  EXPECT_NE(a.hash, d.hash);
  EXPECT_EQ(manifest_base(a)["points_total"], 2);
  EXPECT_EQ(manifest_base(a)["spec_hash"], a.hash);
}

TEST(SweepSpec, TheMergedCsvHasOneRowPerFinishedPointInSpecOrder) {
  const fs::path dir = fs::temp_directory_path() / ("moesim-sweep-spec-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "points");
  const Spec s = spec_of(R"({"command": "replay", "grid": {"trace": ["t.csv"], "budget": ["2", "4", "8"]}})");
  // Points 2 and 0 finished (written in that order), point 1 not.
  write_file_atomic(point_file(dir, point_id(s, s.points[2])).string(),
                    R"({"metrics": {"hit_rate": 0.75, "read_bytes": 1000}, "warnings": ["w"]})");
  write_file_atomic(point_file(dir, point_id(s, s.points[0])).string(),
                    R"({"metrics": {"hit_rate": 0.25, "decode_hit_rate": 0.5}})");
  size_t found = 0;
  const std::string csv = merged_csv(s, {dir}, &found);
  EXPECT_EQ(found, 2u);
  const std::string header = csv_header();
  ASSERT_EQ(csv.rfind(header, 0), 0u);
  EXPECT_EQ(header.rfind("index,command,trace,model,", 0), 0u);
  const std::string rows = csv.substr(header.size());
  const size_t nl = rows.find('\n');
  const std::string first = rows.substr(0, nl), second = rows.substr(nl + 1);
  EXPECT_EQ(first.rfind("0,\"replay\",\"t.csv\",", 0), 0u) << first;
  EXPECT_THAT(first, HasSubstr(",\"2\","));
  EXPECT_THAT(first, HasSubstr(",0.25,0.5,"));
  EXPECT_EQ(first.substr(first.rfind(',')), ",0");  // no warnings
  EXPECT_EQ(second.rfind("2,\"replay\",\"t.csv\",", 0), 0u) << second;
  EXPECT_THAT(second, HasSubstr(",0.75,,"));
  EXPECT_THAT(second, HasSubstr(",1000,"));             // replay's read_bytes is the ssd_bytes_read column
  EXPECT_EQ(second.substr(second.size() - 3), ",1\n");  // one warning
  fs::remove_all(dir);
}

TEST(SweepSpec, PointMetricsKeepsWhatEachCommandMeasures) {
  EXPECT_EQ(point_metrics("run", Json{{"metrics", {{"tpot", 1}}}, {"header", 0}}), (Json{{"tpot", 1}}));
  EXPECT_EQ(point_metrics("replay", Json{{"results", Json::array({Json{{"hits", 3}}})}}),
            (Json{{"hits", 3}}));
  const Json two = {{"results", Json::array({Json{{"hits", 3}}, Json{{"hits", 4}}})}};
  EXPECT_THAT(error_of([&] { (void)point_metrics("replay", two); }), HasSubstr("this one gave 2 results"));
}

TEST(SweepSpec, ErrorsNameTheFileAndTheJsonPath) {
  const auto err = [](const std::string& text) { return error_of([&] { (void)spec_of(text); }); };
  EXPECT_THAT(err(R"([1])"), HasSubstr("spec.json: a sweep spec is a JSON object"));
  EXPECT_THAT(err(R"({"grids": {}})"), HasSubstr("spec.json: /grids: unknown key; did you mean /grid?"));
  EXPECT_THAT(err(R"({"grid": {"policy": []}})"),
              HasSubstr("spec.json: /grid/policy: expected a non-empty list"));
  EXPECT_THAT(err(R"({"grid": {"budgte": ["2"]}})"),
              HasSubstr("spec.json: /grid/budgte: unknown parameter; did you mean budget?"));
  EXPECT_THAT(err(R"({"grid": {"trace": ["t.csv"], "budget": ["2", ""]}})"),
              HasSubstr("spec.json: /grid/budget/1: an empty value"));
  EXPECT_THAT(err(R"({"grid": {"budget": ["2"]}})"),
              HasSubstr("spec.json: /grid/trace: the point has no trace"));
  EXPECT_THAT(err(R"({"command": "serve", "grid": {"trace": ["t"]}})"),
              HasSubstr("spec.json: /command: unknown command 'serve'"));
  EXPECT_THAT(err(R"({"command": "replay", "grid": {"trace": ["t"], "hw": ["x"]}})"),
              HasSubstr("/grid/hw: `moesim replay` points take no hw (a `moesim run` parameter)"));
  EXPECT_THAT(err(R"({"points": [{"trace": "t", "budget": {"a": 1}}]})"),
              HasSubstr("spec.json: /points/0/budget: expected a string or a number"));
  EXPECT_THAT(err(R"({"description": "none"})"), HasSubstr("spec.json: the spec has no points"));
  EXPECT_THAT(err(R"({"grid": {"trace": ["t"]}, "options": ["--json"]})"),
              HasSubstr("spec.json: /options/0: --json is the sweep's to set"));
  EXPECT_THAT(
      err(R"({"grid": {"trace": ["t"]}, "options": ["--budget"]})"),
      HasSubstr("/options/0: --budget is a sweep parameter: set it in /grid or /points as \"budget\""));
  EXPECT_THAT(err(R"({"command": "cluster", "grid": {"placement": ["greedy"]}})"),
              HasSubstr("a cluster point has no servers"));
}

}  // namespace
}  // namespace moesim::harness::sweep
