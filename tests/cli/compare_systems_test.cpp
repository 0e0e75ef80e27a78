// `moesim compare --system` end to end (harness/compare_systems.h): every row is the `moesim run` of its
// system, policy, budget and scope (same metrics, bit for bit); policy= in a spec or each --policy; a
// per-layer system (zipmoe) runs at layer scope only; the lowest TPOT per budget and scope is marked; --jobs
// does not change the rows; the CSV is the policy comparison's columns plus `system`, and --plot draws it
// (both comparisons); --routing with --system is refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"

namespace moesim::test {
namespace {

namespace fs = std::filesystem;

class CompareSystemsCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_path("compare_systems");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(
        moesim_cli("-q trace synth --model qwen3-30b-a3b --tokens 24 --prompt-tokens 4 --zipf 0.9 --seed 7 "
                   "-o " +
                   dir_ + "/q.mtr")
            .code,
        0);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static Json json_of(const CliResult& r) {
    EXPECT_EQ(r.code, 0) << r.err;
    return Json::parse(r.out);
  }
  static std::string dir_;
};
std::string CompareSystemsCli::dir_;

TEST_F(CompareSystemsCli, EveryRowIsTheRunOfItsCell) {
  const std::string base = "-q compare " + dir_ + "/q.mtr --model qwen3-30b-a3b --budget 4GiB,6GiB --json ";
  const Json j = json_of(moesim_cli(base + "--system offload:policy=lfu,zipmoe,layer-offload --jobs 2"));
  const Json& rows = j["rows"];
  // offload and layer-offload at both scopes, zipmoe (per-layer pools) at layer only: (2 + 2 + 1) x 2
  // budgets.
  ASSERT_EQ(rows.size(), 10u);
  std::map<std::string, int> per_system;
  for (const Json& row : rows) {
    ++per_system[row["system"].get<std::string>()];
    if (row["system"] == "zipmoe") {
      EXPECT_EQ(row["scope"], "layer");
    }
    if (row["system"] == "offload") {
      EXPECT_EQ(row["eviction"], "lfu");
    }
    const Json run = json_of(moesim_cli(
        "-q run " + dir_ + "/q.mtr --model qwen3-30b-a3b --json --system " +
        row["system"].get<std::string>() +
        (row["eviction_is_default"].get<bool>() ? "" : " --policy " + row["eviction"].get<std::string>()) +
        " --budget " + row["budget_requested"].get<std::string>() + " --scope " +
        row["scope"].get<std::string>()));
    for (const char* key : {"cache", "tpot", "ttft", "ssd_bytes_read", "decode_tokens_per_s"})
      EXPECT_EQ(row["metrics"][key], run["metrics"][key]) << key << " of " << row.dump().substr(0, 200);
  }
  EXPECT_EQ(per_system["offload"], 4);
  EXPECT_EQ(per_system["layer-offload"], 4);
  EXPECT_EQ(per_system["zipmoe"], 2);

  // Exactly one best row per (budget, scope), the lowest mean TPOT there.
  std::map<std::string, std::pair<double, int>> lowest;
  for (const Json& row : rows) {
    const std::string key = row["budget"].get<std::string>() + "/" + row["scope"].get<std::string>();
    const double t = row["metrics"]["tpot"]["mean_s"].get<double>();
    if (!lowest.count(key) || t < lowest[key].first) lowest[key] = {t, 0};
  }
  for (const Json& row : rows) {
    const std::string key = row["budget"].get<std::string>() + "/" + row["scope"].get<std::string>();
    const bool is_lowest = row["metrics"]["tpot"]["mean_s"].get<double>() == lowest[key].first;
    EXPECT_EQ(row["best_tpot_at_budget_and_scope"].get<bool>(), is_lowest) << key;
    lowest[key].second += row["best_tpot_at_budget_and_scope"].get<bool>();
  }
  for (const auto& [key, v] : lowest) EXPECT_EQ(v.second, 1) << key;

  // --jobs does not change the rows.
  const Json one = json_of(moesim_cli(base + "--system offload:policy=lfu,zipmoe,layer-offload --jobs 1"));
  EXPECT_EQ(one["rows"], rows);
}

TEST_F(CompareSystemsCli, PolicyListCrossesSystemsWithoutTheirOwn) {
  const Json j =
      json_of(moesim_cli("-q compare " + dir_ +
                         "/q.mtr --budget 4GiB --scope layer --json --system offload,layer-offload "
                         "--policy lru,fifo"));
  std::set<std::string> seen;
  for (const Json& row : j["rows"])
    seen.insert(row["system"].get<std::string>() + "/" + row["eviction"].get<std::string>());
  EXPECT_EQ(seen, (std::set<std::string>{"offload/lru", "offload/fifo", "layer-offload/lru",
                                         "layer-offload/fifo"}));
}

TEST_F(CompareSystemsCli, CsvAndPlotOfBothComparisons) {
  const std::string csv = dir_ + "/s.csv", png = dir_ + "/s.png", ppng = dir_ + "/p.png";
  const CliResult r =
      moesim_cli("-q compare " + dir_ +
                 "/q.mtr --model qwen3-30b-a3b --budget 4GiB,6GiB --system offload,zipmoe --csv " + csv +
                 " --plot " + png);
  const bool matplotlib = std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0;
  if (matplotlib) {
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_GT(fs::file_size(png), 1000u);
    EXPECT_FALSE(fs::exists(dir_ + "/s.pdf"));  // only the file asked for
  }
  const std::string table = read_text(csv);
  EXPECT_EQ(table.rfind("budget,eviction,hit_rate,decode_hit_rate,tpot_mean_s,", 0), 0u) << table;
  EXPECT_NE(table.find(",scope,system\n"), std::string::npos);
  EXPECT_NE(table.find(",layer,\"zipmoe\"\n"), std::string::npos);
  const CliResult p =
      moesim_cli("-q compare " + dir_ + "/q.mtr --policy lru,lfu --budget 4GiB,6GiB --plot " + ppng);
  if (matplotlib) {
    ASSERT_EQ(p.code, 0) << p.err;
    EXPECT_GT(fs::file_size(ppng), 1000u);
  }
}

TEST_F(CompareSystemsCli, Refusals) {
  const std::string base = "-q compare " + dir_ + "/q.mtr --budget 4GiB ";
  CliResult r = moesim_cli(base + "--system offload --routing cache-prior:lambda=0.5");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--routing and --prefetch do not combine with --system"), std::string::npos) << r.err;
  r = moesim_cli(base + "--system offlaod");
  EXPECT_EQ(r.code, 2) << r.err;
  r = moesim_cli(base + "--system offload:policy=nope");
  EXPECT_EQ(r.code, 2) << r.err;
  r = moesim_cli(base + "--system prism");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("moesim cluster"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace moesim::test
