// `moesim plan` end to end (MOESIM_CLI_PATH): the summary, the JSON (header, plan, runners-up), -o, the
// user-given inclusion list, --ratio, and clear errors for bad options.
#include <gtest/gtest.h>

#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using moesim::test::moesim_cli;

const std::string kTrace = moesim::test::bundled_data("traces/qwen3-30b-a3b.route.csv");
const std::string kBase = "plan --trace " + kTrace + " --model qwen3-30b-a3b --hw jetson-agx-orin-64gb ";

TEST(PlanCli, SummaryNamesRatiosSizesMakespanAndRunnersUp) {
  const auto r = moesim_cli(kBase + "--budget 8GiB --pools F,C,S,E --grid 0.05");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s :
       {"chosen:", "expected makespan per layer", "#2", "rho 0.3253", "k = 6 of 128", "1771 points"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(PlanCli, JsonPlanFitsTheBudgetAndRunnersUpAreNoBetter) {
  const std::string out = moesim::test::temp_path("plan.json");
  const auto r = moesim_cli(kBase + "--budget 4GiB --pools F,S,E --grid 0.1 --runners-up 3 --json -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const moesim::Json j = moesim::load_json_file(out);
  EXPECT_EQ(j.begin().key(), "header");
  EXPECT_EQ(j["header"]["command"], "plan");
  EXPECT_EQ(j["header"]["config"]["pools"], "F,S,E");
  EXPECT_EQ(j["trace"]["path"], kTrace);  // the trace description every command shares
  EXPECT_EQ(j["trace"]["lookups"], 39526);
  EXPECT_EQ(j["grid_points"], 66);  // compositions of 10 steps into 3 pools
  const auto& p = j["plan"];
  EXPECT_EQ(p["pools"]["C"]["ratio"], 0.0);
  double ratio_sum = 0;
  for (const auto& [name, pool] : p["pools"].items()) ratio_sum += pool["ratio"].get<double>();
  EXPECT_NEAR(ratio_sum, 1.0, 1e-12);
  EXPECT_LE(p["used_bytes_per_layer"].get<uint64_t>() * 48, 4ull << 30);
  ASSERT_EQ(j["runners_up"].size(), 3u);
  for (const auto& ru : j["runners_up"])
    EXPECT_GE(ru["expected_makespan_s"].get<double>(), p["expected_makespan_s"].get<double>());
  EXPECT_GT(p["expected_makespan_s"].get<double>(), 0.0);
}

TEST(PlanCli, MoreBudgetNeverRaisesTheExpectedMakespan) {
  double prev = 1e30;
  for (const char* b : {"1GiB", "4GiB", "16GiB", "40GiB"}) {
    const auto r = moesim_cli(kBase + "--budget " + b + " --json");
    ASSERT_EQ(r.code, 0) << r.err;
    const double m = moesim::Json::parse(r.out)["plan"]["expected_makespan_s"].get<double>();
    EXPECT_LE(m, prev) << b;
    prev = m;
  }
}

TEST(PlanCli, IoChoosesTheVariantOfAlg3AsRunDoes) {
  // The same pools evaluated both ways: the workers' fused reads never expect more delay than the one I/O
  // thread's, and here (all of a layer's misses read on one thread at 4 GiB) less. The default is run's.
  const std::string args = kBase + "--budget 4GiB --pools F=0.25,C=0.25,S=0.25,E=0.25 --json";
  const auto f = moesim_cli(args + " --io fused"), t = moesim_cli(args + " --io thread"),
             d = moesim_cli(args);
  ASSERT_EQ(f.code, 0) << f.err;
  ASSERT_EQ(t.code, 0) << t.err;
  ASSERT_EQ(d.code, 0) << d.err;
  const moesim::Json jf = moesim::Json::parse(f.out), jt = moesim::Json::parse(t.out),
                     jd = moesim::Json::parse(d.out);
  EXPECT_EQ(jf["header"]["config"]["io"], "fused");
  EXPECT_EQ(jt["header"]["config"]["io"], "thread");
  EXPECT_EQ(jd["header"]["config"]["io"], "fused");
  EXPECT_LT(jf["plan"]["expected_makespan_s"].get<double>(), jt["plan"]["expected_makespan_s"].get<double>());
  const auto bad = moesim_cli(kBase + "--budget 4GiB --io aio");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("aio"), std::string::npos) << bad.err;
}

TEST(PlanCli, GivenInclusionAndRatio) {
  const auto r = moesim_cli(
      "plan --model deepseek-v2-lite --inclusion '[0.9,0.8,0.7,0.6,0.5,0.5,0.4,0.3,0.2,0.1]' --budget 2GiB "
      "--ratio 0.5 --shards 8 --threads 4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const moesim::Json j = moesim::Json::parse(r.out);
  const auto& c = j["header"]["config"];
  EXPECT_EQ(c["k"], 5);
  EXPECT_EQ(c["rho"], 0.5);
  EXPECT_EQ(c["rho_source"], "--ratio");
  EXPECT_EQ(c["delays"]["K"], 8);
  EXPECT_EQ(c["delays"]["L"], 4);
  EXPECT_EQ(c["inclusion"]["f"].size(), 64u);
}

TEST(PlanCli, GivenRatiosAreEvaluatedNotSearched) {
  const auto given = moesim_cli(kBase + "--budget 8GiB --pools F=0.3,C=0.7 --json");
  ASSERT_EQ(given.code, 0) << given.err;
  const moesim::Json g = moesim::Json::parse(given.out);
  EXPECT_EQ(g["header"]["config"]["given_ratios"], "F=0.3,C=0.7");
  EXPECT_EQ(g["header"]["config"]["pools"], "F,C");
  EXPECT_EQ(g["plan"]["ratios"], "F=0.3,C=0.7");
  EXPECT_EQ(g["runners_up"].size(), 0u);
  // The search over F,C at step 0.1 includes F=0.3,C=0.7, so it finds a plan at least as good.
  const auto searched = moesim_cli(kBase + "--budget 8GiB --pools F,C --grid 0.1 --json");
  ASSERT_EQ(searched.code, 0) << searched.err;
  EXPECT_LE(moesim::Json::parse(searched.out)["plan"]["expected_makespan_s"].get<double>(),
            g["plan"]["expected_makespan_s"].get<double>());
  const auto bad = moesim_cli(kBase + "--budget 8GiB --pools F=0.3,C=0.6");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("must sum to 1"), std::string::npos) << bad.err;
}

TEST(PlanCli, PlansThroughTheSystemsPlannerAndRefusesASystemWithout) {
  const std::string args = "--budget 4GiB --pools F,C --grid 0.1 --json";
  const auto given = moesim_cli(kBase + "--system zipmoe " + args);
  ASSERT_EQ(given.code, 0) << given.err;
  const auto by_default = moesim_cli(kBase + args);
  ASSERT_EQ(by_default.code, 0) << by_default.err;
  EXPECT_EQ(moesim::Json::parse(given.out)["plan"], moesim::Json::parse(by_default.out)["plan"]);
  struct Case {
    std::string system, message;
  };
  for (const Case& c : std::vector<Case>{
           {"offload", "--system offload has no planner: `moesim plan` plans the pools of zipmoe"},
           {"no-cache", "--system no-cache has no planner"},
           {"no-such", "unknown system 'no-such'"},
           {"zipmoe:shards=2", "give the system's name only"},
       }) {
    const auto r = moesim_cli(kBase + "--system " + c.system + " --budget 4GiB");
    EXPECT_EQ(r.code, 2) << c.system << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.system << "\n" << r.err;
  }
}

TEST(PlanCli, BadOptionsAreUsageErrors) {
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--budget 8GiB --pools F,X", "unknown pool 'X'"},
           {"--budget 8GiB --grid 0.3", "--grid must be 1/n"},
           {"--budget 8GiB --phase both", "unknown invocation phase 'both'"},
           {"--budget 800GiB", "pass --force"},
           {"--budget 8GiB --ratio 0", "--ratio must be a number in (0, 4]"},
           {"", "--budget is required"},
       }) {
    const auto r = moesim_cli(kBase + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
  const auto r = moesim_cli("plan --budget 8GiB");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("a trace is required"), std::string::npos) << r.err;
  const auto few = moesim_cli("plan --model deepseek-v2-lite --inclusion '[0.9,0.8]' --budget 1GiB");
  EXPECT_EQ(few.code, 1);
  EXPECT_NE(few.err.find("need at least 3"), std::string::npos) << few.err;
}

}  // namespace
