// The planner's expectation beside the run (harness/planner_report.h), on hand-made metrics: the expected
// miss rate is the plan's expected misses over k, the simulated rates count decode lookups where the run has
// any (all lookups otherwise) with cold-start misses apart, and a system that plans nothing has no report.
#include "harness/planner_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace moesim::harness {
namespace {

using ::testing::HasSubstr;

const Json kPlan = {{"k", 4},
                    {"expected_misses", 1.0},
                    {"expected_makespan_s", 0.002},
                    {"ratios", "F=0.5,E=0.5"},
                    {"profile", {{"source", "the trace"}}}};

// 20 lookups of which 10 in decode; misses (state M) 8 of all and 3 in decode; cold-start misses 5 and 1.
Json metrics(uint64_t decode_hits = 7, uint64_t decode_misses = 3) {
  return {{"states",
           {{"lookups", {{"F", 12}, {"M", 8}}},
            {"decode_lookups", {{"F", decode_hits}, {"M", decode_misses}}},
            {"cold_misses", 5},
            {"decode_cold_misses", 1}}},
          {"layer_makespan", {{"mean_s", 0.004}}},
          {"layer_makespan_decode", {{"mean_s", 0.003}}}};
}

TEST(PlannerReport, DecodeLookupsAreCountedWhereTheRunHasThem) {
  const Json r = planner_report(kPlan, metrics());
  EXPECT_DOUBLE_EQ(r["expected_miss_rate"].get<double>(), 0.25);
  EXPECT_EQ(r["lookups"], 10);
  EXPECT_EQ(r["phase"], "decode");
  EXPECT_DOUBLE_EQ(r["simulated_miss_rate"].get<double>(), 0.3);
  EXPECT_EQ(r["simulated_cold_misses"], 1);
  EXPECT_DOUBLE_EQ(r["simulated_cold_miss_rate"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(r["simulated_warm_miss_rate"].get<double>(), 0.2);
  EXPECT_EQ(r["expected_layer_s"], 0.002);
  EXPECT_EQ(r["simulated_layer_s"], 0.003);
  EXPECT_EQ(r["profile"]["source"], "the trace");
}

TEST(PlannerReport, ARunWithoutDecodeCountsEveryLookup) {
  const Json r = planner_report(kPlan, metrics(0, 0));
  EXPECT_EQ(r["lookups"], 20);
  EXPECT_EQ(r["phase"], "all");
  EXPECT_DOUBLE_EQ(r["simulated_miss_rate"].get<double>(), 0.4);
  EXPECT_EQ(r["simulated_cold_misses"], 5);
  EXPECT_DOUBLE_EQ(r["simulated_warm_miss_rate"].get<double>(), 0.15);
  EXPECT_EQ(r["simulated_layer_s"], 0.004);
}

TEST(PlannerReport, AnExpectationRoundedBelowZeroIsZeroAndNoPlanNoReport) {
  Json plan = kPlan;
  plan["expected_misses"] = -1e-17;
  EXPECT_EQ(planner_report(plan, metrics())["expected_miss_rate"], 0.0);
  plan.erase("profile");
  EXPECT_TRUE(planner_report(plan, metrics())["profile"].is_null());
  EXPECT_TRUE(planner_report(Json(nullptr), metrics()).is_null());
  EXPECT_EQ(planner_report_line(Json(nullptr)), "");
}

TEST(PlannerReport, TheLineSaysExpectedBesideSimulated) {
  const std::string line = planner_report_line(planner_report(kPlan, metrics()));
  EXPECT_EQ(line.rfind("planner:     expected 25.00% misses, ", 0), 0u) << line;
  EXPECT_THAT(line, HasSubstr("simulated 30.00% misses (10.00% cold-start, 20.00% warm)"));
  EXPECT_THAT(line, HasSubstr("(decode lookups; profile: the trace)\n"));
}

}  // namespace
}  // namespace moesim::harness
