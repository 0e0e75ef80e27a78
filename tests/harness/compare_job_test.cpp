// `moesim compare` called directly (harness/compare_job.h): its rows are the cross product budgets x scopes
// x policies, each a simulated run whose cache counts are those of the cache-only replay at the same scope
// and budget (harness/replay_job.h), with the CSV holding the same rows; refusals name the option.
// Input: the bundled gpt-oss-120b trace (its model a preset, so the simulation has every size it needs).
#include "harness/compare_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "base/error.h"
#include "harness/replay_job.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const std::string kTrace = test::bundled_data("traces/gpt-oss-120b.route.csv");

CompareArgs sim_args() {
  CompareArgs a;
  a.trace = kTrace;
  a.policies = {"lru", "belady"};
  a.budgets = {"4", "8"};
  a.json = true;
  return a;
}

TEST(CompareJob, RowsAreBudgetsTimesScopesTimesPolicies) {
  const CompareResult r = compare_result(sim_args());
  const Json& rows = r.doc["rows"];
  ASSERT_EQ(rows.size(), 2u * 2u * 2u);
  const std::vector<std::string> budgets = {"4", "8"}, scopes = {"global", "layer"},
                                 policies = {"lru", "belady"};
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(rows[i]["budget"], budgets[i / 4] + " experts/layer");
    EXPECT_EQ(rows[i]["scope"], scopes[(i / 2) % 2]);
    EXPECT_EQ(rows[i]["eviction"], policies[i % 2]);
    EXPECT_EQ(rows[i]["routing"], "identity");
    EXPECT_TRUE(rows[i]["metrics"]["tpot"]["mean_s"].get<double>() > 0);
  }
  EXPECT_EQ(r.doc["header"]["command"], "compare");
  EXPECT_EQ(r.doc["header"]["config"]["budgets"], Json({"4", "8"}));
  EXPECT_EQ(r.doc["header"]["config"]["scope"], Json({"global", "layer"}));
  // The CSV: its header and one line per row, in the same order.
  const size_t lines = static_cast<size_t>(std::count(r.csv.begin(), r.csv.end(), '\n'));
  EXPECT_EQ(lines, 1 + rows.size());
  EXPECT_EQ(r.csv.rfind("budget,eviction,", 0), 0u);
  EXPECT_THAT(r.csv, HasSubstr("\n8,\"belady\",288,"));
}

TEST(CompareJob, EachCellHitsAsTheCacheOnlyReplayAtItsScopeAndBudget) {
  const CompareResult r = compare_result(sim_args());
  const std::vector<std::string> budgets = {"4", "8"};
  for (size_t i = 0; i < r.doc["rows"].size(); ++i) {
    const Json& row = r.doc["rows"][i];
    SCOPED_TRACE(row["budget"].dump() + " " + row["scope"].dump() + " " + row["eviction"].dump());
    ReplayArgs ra;
    ra.trace = kTrace;
    ra.policies = {row["eviction"].get<std::string>()};
    ra.budgets = {budgets[i / 4]};
    ra.scope = row["scope"].get<std::string>();
    ra.json = true;
    const Json replayed = Json::parse(replay_output(ra))["results"][0];
    const Json& cache = row["metrics"]["cache"];
    EXPECT_EQ(cache["hit_rate"], replayed["hit_rate"]);
    EXPECT_EQ(cache["decode_hit_rate"], replayed["decode_hit_rate"]);
  }
  // Belady's is the optimal hit rate: never below LRU's in the same cell (rows alternate lru, belady).
  const Json& rows = r.doc["rows"];
  for (size_t i = 0; i + 1 < rows.size(); i += 2)
    EXPECT_GE(rows[i + 1]["metrics"]["cache"]["hit_rate"].get<double>(),
              rows[i]["metrics"]["cache"]["hit_rate"].get<double>());
}

TEST(CompareJob, RefusesBadOptionsNamingThem) {
  CompareArgs a = sim_args();
  a.batch = 0;
  EXPECT_THAT(error_of([&] { (void)compare_result(a); }), HasSubstr("--batch must be at least 1"));
  a = sim_args();
  a.io_depth = 0;
  EXPECT_THAT(error_of([&] { (void)compare_result(a); }), HasSubstr("--io-depth"));
  a = sim_args();
  a.scope = "galaxy";
  EXPECT_THAT(error_of([&] { (void)compare_result(a); }), HasSubstr("galaxy"));
  a = sim_args();
  a.budgets = {"lots"};
  EXPECT_THAT(error_of([&] { (void)compare_result(a); }), HasSubstr("--budget"));
  a = sim_args();
  a.policies = {"no-such-policy"};
  EXPECT_THAT(error_of([&] { (void)compare_result(a); }), HasSubstr("no-such-policy"));
  a = sim_args();
  a.trace = test::test_data("traces/no-such-trace.csv");
  EXPECT_THAT(error_of([&] { (void)compare_result(a); }), HasSubstr("no-such-trace.csv"));
}

}  // namespace
}  // namespace moesim::harness
