// The --routing list and the Table-2 layout (harness/routing_table.h): a comma starts a new spec only before
// a routing policy's name, every spec's name and parameter names are checked (their values when the policy is
// made), identity is labelled "original"; the table's cache size is per layer at layer scope and over all
// layers at global scope, an oracle that did not converge says so, and the deviation columns are "-" without
// selections and "n/a" without router weights.
#include "harness/routing_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "base/error.h"
#include "tests/error_of.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

TEST(RoutingTable, ACommaStartsASpecOnlyBeforeARoutingName) {
  EXPECT_EQ(split_routing_list({"cache-prior:lambda=0.5,J=2,prune:h=3"}),
            (std::vector<std::string>{"cache-prior:lambda=0.5,J=2", "prune:h=3"}));
  EXPECT_EQ(split_routing_list({"identity;prune", "max-rank"}),
            (std::vector<std::string>{"identity", "prune", "max-rank"}));
  EXPECT_TRUE(split_routing_list({}).empty());
  EXPECT_THAT(error_of([] { (void)split_routing_list({"teleport"}); }),
              HasSubstr("unknown routing policy 'teleport' (known: "));
  EXPECT_THAT(error_of([] { (void)split_routing_list({"prune:depth=2"}); }), HasSubstr("depth"));
}

TEST(RoutingTable, IdentityIsTheOriginalRouting) {
  EXPECT_EQ(routing_label("identity"), "original");
  EXPECT_EQ(routing_label("prune:h=2"), "prune:h=2");
}

// The data rows of the table (its header and footnote left out).
std::vector<std::string> rows_of(const std::string& table) {
  std::vector<std::string> rows;
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line))
    if (line.rfind("miss = ", 0) != 0) rows.push_back(line);
  return rows;
}

TEST(RoutingTable, TheTableSaysSizesLifetimesAndDeviations) {
  traces::TraceInfo info;
  info.model = "tiny";
  info.synthetic = true;
  info.layers = 2;
  info.experts = 4;
  info.top_k = 2;
  replay::RoutingReplayResult plain;
  plain.replay.policy = "lru";
  plain.replay.capacity_experts = 4;  // over both layers
  plain.routing = "identity";
  plain.miss_pct = 25;
  plain.decode_miss_pct = 12.5;
  plain.lifetime.add(2);
  plain.lifetime.add(4);  // mean 3, sd sqrt(2)
  replay::RoutingReplayResult pruned = plain;
  pruned.replay.policy = "belady";
  pruned.routing = "prune:h=2";
  pruned.oracle = true;
  pruned.converged = false;
  pruned.passes = 4;
  pruned.lifetime = {};
  pruned.deviation.selections = 10;
  pruned.deviation.changed = 3;
  pruned.deviation.mass_known = false;

  const std::string layer = routing_replay_table({plain, pruned}, info, CacheScope::kPerLayer);
  const std::vector<std::string> rows = rows_of(layer);
  ASSERT_EQ(rows.size(), 2u) << layer;
  EXPECT_EQ(rows[0].rfind("tiny (SYNTHETIC) 2 / 4 ", 0), 0u) << rows[0];
  EXPECT_THAT(rows[0], HasSubstr(" original "));
  EXPECT_THAT(rows[0], HasSubstr("3 (± 1)"));
  EXPECT_THAT(rows[0], HasSubstr("25.00%    12.50%    0.00%"));
  EXPECT_EQ(rows[0].substr(rows[0].size() - 2), " -");  // no selections: no mass
  EXPECT_THAT(rows[1], HasSubstr("belady [4 passes, open]"));
  EXPECT_THAT(rows[1], HasSubstr(" prune:h=2 "));
  EXPECT_THAT(rows[1], HasSubstr("30.00%"));
  EXPECT_EQ(rows[1].substr(rows[1].size() - 4), " n/a");  // the router's weights unknown
  EXPECT_THAT(layer, HasSubstr("miss = misses / the router's lookups"));

  const std::vector<std::string> global = rows_of(routing_replay_table({plain}, info, CacheScope::kGlobal));
  ASSERT_EQ(global.size(), 1u);
  EXPECT_EQ(global[0].rfind("tiny (SYNTHETIC) 4 / 8 ", 0), 0u) << global[0];
}

}  // namespace
}  // namespace moesim::harness
