// `moesim replay` called directly (harness/replay_job.h) on the hand-checkable tiny trace
// (tests/data/traces/tiny.route.csv: 2 layers x 4 experts, top-2, expert sizes 1000 B in layer 0 and 2000 B
// in layer 1). Its prefill is one invocation per layer (layer 0 {1,3,2}, layer 1 {0,3}), then two decode
// steps (layer 0 {1,0} {3,2}, layer 1 {2,3} {0,1}): 6 invocations, 13 lookups, 8 of them in decode.
//   at 2 experts per layer (= top-k) a layer holds at most one hit per decode step and layer 0's second
//     step none: 2 hits is the optimum (Belady's), both in decode; 11 misses read 6 x 1000 + 5 x 2000 B;
//     layer 0's prefill (3 experts) is over the capacity;
//   at 4 experts per layer (every expert) only the first use of each of the 8 experts misses: 5 hits, all in
//     decode, 12000 B read and nothing evicted, whatever the policy.
// Rows are the cross product policies x budgets; refusals name the option that was wrong.
#include "harness/replay_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const std::string kTiny = test::test_data("traces/tiny.route.csv");

ReplayArgs tiny_args(std::vector<std::string> policies, std::vector<std::string> budgets) {
  ReplayArgs a;
  a.trace = kTiny;
  a.policies = std::move(policies);
  a.budgets = std::move(budgets);
  a.scope = "layer";
  a.json = true;
  return a;
}

TEST(ReplayJob, AtTopKBeladyIsOptimalAndAtAllExpertsOnlyFirstUsesMiss) {
  const Json j = Json::parse(replay_output(tiny_args({"lru", "lfu", "belady"}, {"2", "4"})));
  const Json& rows = j["results"];
  ASSERT_EQ(rows.size(), 6u);  // 3 policies x 2 budgets, policy-major
  const std::vector<std::string> policies = {"lru", "lfu:history=0", "belady"};  // as canonically named
  for (size_t i = 0; i < rows.size(); ++i) {
    const Json& r = rows[i];
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["eviction"], policies[i / 2]);
    EXPECT_EQ(r["scope"], "layer");
    EXPECT_EQ(r["invocations"], 6);
    EXPECT_EQ(r["lookups"], 13);
    EXPECT_EQ(r["decode_lookups"], 8);
    if (i % 2 == 0) {
      EXPECT_EQ(r["capacity_experts"], 2 * 2);
      EXPECT_LE(r["hits"], rows[4]["hits"]);  // none beats Belady
      EXPECT_EQ(r["over_capacity_invocations"], 1);
    } else {
      EXPECT_EQ(r["capacity_experts"], 4 * 2);
      EXPECT_EQ(r["hits"], 5);
      EXPECT_EQ(r["decode_hits"], 5);
      EXPECT_EQ(r["read_bytes"], 4 * 1000 + 4 * 2000);
      EXPECT_EQ(r["evictions"], 0);
      EXPECT_EQ(r["over_capacity_invocations"], 0);
    }
    EXPECT_DOUBLE_EQ(r["hit_rate"].get<double>(), r["hits"].get<double>() / 13);
  }
  const Json& belady = rows[4];
  EXPECT_EQ(belady["hits"], 2);
  EXPECT_EQ(belady["decode_hits"], 2);
  EXPECT_EQ(belady["read_bytes"], 6 * 1000 + 5 * 2000);
  EXPECT_EQ(j["header"]["command"], "replay");
  EXPECT_EQ(j["header"]["config"]["scope"], "layer");
  EXPECT_EQ(j["header"]["config"]["budgets"], Json({"2", "4"}));
}

TEST(ReplayJob, TheTextTableDescribesTheTraceAndHasOneRowPerConfiguration) {
  ReplayArgs a = tiny_args({"lru"}, {"2", "3", "4"});
  a.json = false;
  const std::string text = replay_output(a);
  EXPECT_THAT(text,
              HasSubstr("2 layers x 4 experts, top-2, 6 invocations, 13 lookups (8 decode); layer scope"));
  size_t lru_rows = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lru_rows += line.rfind("lru ", 0) == 0;
  EXPECT_EQ(lru_rows, 3u);
}

TEST(ReplayJob, TheExactLruCurveMeetsTheReplayAtEveryBudget) {
  ReplayArgs a = tiny_args({"lru"}, {});
  a.mrc = true;
  const Json j = Json::parse(replay_output(a));
  ASSERT_EQ(j["mrc"].size(), 1u);
  const Json& curve = j["mrc"][0];
  EXPECT_EQ(curve["exact"], true);
  // Without a budget the curve covers top-k (2) to every expert (4).
  const Json& points = curve["points"];
  ASSERT_EQ(points.size(), 3u);
  const Json replayed = Json::parse(replay_output(tiny_args({"lru"}, {"2", "3", "4"})))["results"];
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(points[i]["capacity_experts"], 2 * (2 + i));
    EXPECT_EQ(points[i]["hits"], replayed[i]["hits"]);
    EXPECT_EQ(points[i]["decode_hits"], replayed[i]["decode_hits"]);
  }
  EXPECT_EQ(points[2]["hits"], 5);
  EXPECT_LE(points[0]["hits"], points[1]["hits"]);
  EXPECT_LE(points[1]["hits"], points[2]["hits"]);
}

TEST(ReplayJob, AnUnwritableOutputIsRefusedBeforeTheReplay) {
  ReplayArgs a = tiny_args({"lru"}, {"3"});
  a.out = "/nonexistent-dir/moesim-replay.json";
  EXPECT_THAT(error_of([&] { (void)replay_output(a); }),
              HasSubstr("/nonexistent-dir/moesim-replay.json: cannot write"));
}

TEST(ReplayJob, RefusesBadOptionsNamingThem) {
  ReplayArgs a = tiny_args({"lru"}, {});
  EXPECT_THAT(error_of([&] { (void)replay_output(a); }), HasSubstr("a budget is required"));
  a = tiny_args({}, {"2"});
  EXPECT_THAT(error_of([&] { (void)replay_output(a); }), HasSubstr("--policy: no policy given"));
  a = tiny_args({"lru"}, {"2"});
  a.prefetch = {"none"};
  a.routing = {"identity"};
  EXPECT_THAT(error_of([&] { (void)replay_output(a); }), HasSubstr("--prefetch cannot be combined"));
  a = tiny_args({"lru"}, {"2"});
  a.csv = "curve.csv";
  EXPECT_THAT(error_of([&] { (void)replay_output(a); }), HasSubstr("--csv and --plot need --mrc"));
  a = tiny_args({"lru"}, {"2"});
  a.mrc = true;
  a.mrc_sample = 0;
  EXPECT_THAT(error_of([&] { (void)replay_output(a); }), HasSubstr("--mrc-sample must be in (0, 1]"));
  a = tiny_args({"lru"}, {"2"});
  a.batch = 0;
  EXPECT_THAT(error_of([&] { (void)replay_output(a); }), HasSubstr("--batch"));
  a = tiny_args({"lru"}, {"2"});
  a.trace = test::test_data("traces/no-such-trace.csv");
  EXPECT_THAT(error_of([&] { (void)replay_output(a); }), HasSubstr("no-such-trace.csv"));
}

TEST(ReplayJob, ACapacityBelowTopKIsRefused) {
  ReplayArgs a = tiny_args({"lru"}, {"1"});
  const std::string e = error_of([&] { (void)replay_output(a); });
  EXPECT_THAT(e, HasSubstr("1 experts per layer is smaller than one layer's top-k (top-k = 2"));
}

}  // namespace
}  // namespace moesim::harness
