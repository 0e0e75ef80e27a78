// `moesim plan` called directly (harness/plan_job.h), planning from a given rank profile (--inclusion, no
// trace to read): the pools fit the budget, a pool's expected hits are the inclusion probabilities of the
// ranks it covers, the hits and misses add up to k, the runners-up are no better than the plan, and a plan
// with its ratios given is that evaluation alone; refusals name the option.
#include "harness/plan_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "tests/error_of.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

// Ten ranks summing to k = 5 of deepseek-v2-lite's 64 experts.
const std::string kInclusion = "[0.9,0.8,0.7,0.6,0.5,0.5,0.4,0.3,0.2,0.1]";

PlanArgs inclusion_args(const std::string& budget) {
  PlanArgs a;
  a.load.model = "deepseek-v2-lite";
  a.inclusion = kInclusion;
  a.budget = budget;
  a.grid = 0.1;
  a.runners_up = 3;
  a.json = true;
  return a;
}

TEST(PlanJob, ThePlanFitsTheBudgetAndItsHitsAreTheInclusionOfTheRanksItCovers) {
  PlanArgs a = inclusion_args("1GiB");
  const Json j = Json::parse(plan_output(a));
  const Json& config = j["header"]["config"];
  EXPECT_EQ(config["k"], 5);
  EXPECT_EQ(config["experts"], 64);
  EXPECT_EQ(config["budget_bytes"], uint64_t{1} << 30);
  const uint64_t per_layer = config["budget_bytes_per_layer"].get<uint64_t>();
  EXPECT_EQ(per_layer, (uint64_t{1} << 30) / config["layers"].get<uint64_t>());
  const std::vector<double> f = config["inclusion"]["f"].get<std::vector<double>>();
  ASSERT_EQ(f.size(), 64u);
  EXPECT_DOUBLE_EQ(f[0], 0.9);
  EXPECT_DOUBLE_EQ(f[10], 0.0);

  const Json& plan = j["plan"];
  uint64_t used = 0, ranks = 0;
  double hits = 0, ratio_sum = 0;
  for (const auto& [name, pool] : plan["pools"].items()) {
    SCOPED_TRACE(name);
    const uint64_t pool_bytes = pool["budget_bytes_per_layer"].get<uint64_t>();
    EXPECT_LE(pool["experts_per_layer"].get<uint64_t>() * pool["bytes_per_expert"].get<uint64_t>(),
              pool_bytes);
    used += pool_bytes;
    ranks += pool["ranks_covered"].get<uint64_t>();
    hits += pool["expected_hits"].get<double>();
    ratio_sum += pool["ratio"].get<double>();
  }
  EXPECT_LE(used, per_layer);
  EXPECT_LE(plan["used_bytes_per_layer"].get<uint64_t>(), per_layer);
  EXPECT_LE(ranks, 64u);
  EXPECT_NEAR(ratio_sum, 1.0, 1e-12);
  EXPECT_NEAR(hits + plan["expected_misses"].get<double>(), 5.0, 1e-9);
  EXPECT_GT(plan["expected_makespan_s"].get<double>(), 0);
  ASSERT_EQ(j["runners_up"].size(), 3u);
  for (const Json& r : j["runners_up"])
    EXPECT_GE(r["expected_makespan_s"].get<double>(), plan["expected_makespan_s"].get<double>());
  // Compositions of 10 grid steps into the 4 pools: C(13, 3).
  EXPECT_EQ(j["grid_points"], 286);
}

TEST(PlanJob, GivenRatiosAreEvaluatedAloneAndTheFullPoolHoldsTheMostLikelyRanks) {
  PlanArgs a = inclusion_args("1GiB");
  a.pools = "F=1";
  const Json j = Json::parse(plan_output(a));
  EXPECT_EQ(j["header"]["config"]["given_ratios"], "F=1");
  EXPECT_EQ(j["runners_up"].size(), 0u);
  const Json& full = j["plan"]["pools"]["F"];
  const uint64_t per_layer = j["header"]["config"]["budget_bytes_per_layer"].get<uint64_t>();
  const uint64_t n = per_layer / full["bytes_per_expert"].get<uint64_t>();
  ASSERT_GT(n, 0u);
  ASSERT_LT(n, 10u);
  EXPECT_EQ(full["experts_per_layer"], n);
  EXPECT_EQ(full["ranks_covered"], n);
  const std::vector<double> f = j["header"]["config"]["inclusion"]["f"].get<std::vector<double>>();
  double covered = 0;
  for (uint64_t r = 0; r < n; ++r) covered += f[r];
  EXPECT_NEAR(full["expected_hits"].get<double>(), covered, 1e-12);
  EXPECT_NEAR(j["plan"]["expected_misses"].get<double>(), 5.0 - covered, 1e-9);
}

TEST(PlanJob, MoreBudgetNeverRaisesTheExpectedMakespan) {
  double prev = 1e30;
  for (const char* b : {"512MiB", "1GiB", "4GiB"}) {
    PlanArgs a = inclusion_args(b);
    const double m = Json::parse(plan_output(a))["plan"]["expected_makespan_s"].get<double>();
    EXPECT_LE(m, prev) << b;
    prev = m;
  }
}

TEST(PlanJob, TheTextReportNamesTheChosenRatiosAndTheWorkload) {
  PlanArgs a = inclusion_args("1GiB");
  a.json = false;
  const std::string text = plan_output(a);
  EXPECT_THAT(text, HasSubstr("k = 5 of 64 experts"));
  EXPECT_THAT(text, HasSubstr("chosen:"));
  EXPECT_THAT(text, HasSubstr("#4"));  // best + 3 runners-up
}

TEST(PlanJob, RefusesBadOptionsNamingThem) {
  PlanArgs a = inclusion_args("1GiB");
  a.inclusion.clear();
  EXPECT_THAT(error_of([&] { (void)plan_output(a); }), HasSubstr("a trace is required"));
  a = inclusion_args("");
  EXPECT_THAT(error_of([&] { (void)plan_output(a); }), HasSubstr("--budget is required"));
  a = inclusion_args("1GiB");
  a.grid = 0.3;
  EXPECT_THAT(error_of([&] { (void)plan_output(a); }), HasSubstr("--grid must be 1/n"));
  a = inclusion_args("1GiB");
  a.ratio = 0.5;
  a.store = "somewhere";
  EXPECT_THAT(error_of([&] { (void)plan_output(a); }), HasSubstr("--ratio and --store"));
  a = inclusion_args("1GiB");
  a.threads = 5000;
  EXPECT_THAT(error_of([&] { (void)plan_output(a); }), HasSubstr("--workers 5000 is too large"));
  a = inclusion_args("1GiB");
  a.system = PolicySpec{"offload", {}};
  EXPECT_THAT(error_of([&] { (void)plan_output(a); }), HasSubstr("--system offload has no planner"));
  a = inclusion_args("1GiB");
  a.load.model.clear();
  EXPECT_THAT(error_of([&] { (void)plan_output(a); }), HasSubstr("--model is required"));
  a = inclusion_args("1TiB");
  EXPECT_THAT(error_of([&] { (void)plan_output(a); }), HasSubstr("pass --force"));
}

}  // namespace
}  // namespace moesim::harness
