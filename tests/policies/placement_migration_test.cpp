// Prism's migration rule (decide_migration, policies/placement/migration.cpp; Prism, Accelerating Edge
// Inference for Distributed MoE Models with Latency-Optimized Expert Placement, Eq. 3-4): migrate iff
// C(P') + T_mig(P, P') < C(P), on both sides of the boundary, worked by hand.
#include <gtest/gtest.h>

#include "base/error.h"
#include "core/placement.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

// Two servers of one GPU, one layer of 3 experts of 100 bytes, I/O 100 B/s (1 s per changed z).
// Load f_a = (8, 1, 0), f_b = (0, 1, 8).
//   P : a {1},    b {0, 2}  -> a misses 0 and 2 (8 + 0), b misses 1 (1): Eq. 2 = 9
//   P': a {0, 1}, b {2}     -> a misses 2 (0), b misses 0 and 1 (0 + 1): Eq. 2 = 1
//   Eq. 3: z changes at (a, 0) (loaded) and (b, 0) (dropped): T_mig = 2 s (1 s counting loads only).
//   Eq. 4 with c seconds per remote invocation: 1c + 2 < 9c  <=>  c > 0.25.
struct Case {
  Placement cur, plan;
  std::vector<std::vector<double>> load{{8, 1, 0}, {0, 1, 8}};
  MigrationCosts costs;
  Case() {
    cur.layers = plan.layers = 1;
    cur.experts = plan.experts = 3;
    cur.replicas = {{{1, 0}}, {{0, 0}}, {{1, 0}}};
    plan.replicas = {{{0, 0}}, {{0, 0}}, {{1, 0}}};
    costs.gpu_io_bytes_per_s = {{100}, {100}};
  }
  MigrationDecision decide(double c, bool removals = true) {
    costs.remote_invocation_s = c;
    costs.count_removals = removals;
    return decide_migration(cur, plan, load, {100}, costs);
  }
};

TEST(Migration, Eq4BothSides) {
  Case k;
  const MigrationDecision yes = k.decide(0.3);  // 0.3 + 2 = 2.3 < 2.7
  EXPECT_TRUE(yes.migrate);
  EXPECT_DOUBLE_EQ(yes.cost_current_s, 9 * 0.3);
  EXPECT_DOUBLE_EQ(yes.cost_new_s, 0.3);
  EXPECT_DOUBLE_EQ(yes.migration_s, 2);
  EXPECT_FALSE(k.decide(0.25).migrate);  // 0.25 + 2 = 2.25, not < 2.25: equality keeps the placement
  EXPECT_FALSE(k.decide(0.2).migrate);   // 0.2 + 2 = 2.2 > 1.8
  EXPECT_TRUE(k.decide(0.2, false).migrate);  // loads only: 0.2 + 1 = 1.2 < 1.8
  EXPECT_FALSE(k.decide(0.125, false).migrate);  // 0.125 + 1 = 1.125 = 9 * 0.125
}

TEST(Migration, MovesAndBytes) {
  Case k;
  const MigrationDecision d = k.decide(1);
  ASSERT_EQ(d.loads.size(), 1u);
  EXPECT_EQ(d.loads[0].layer, 0u);
  EXPECT_EQ(d.loads[0].expert, 0u);
  EXPECT_EQ(d.loads[0].to, (Replica{0, 0}));
  EXPECT_TRUE(d.loads[0].has_source);
  EXPECT_EQ(d.loads[0].from, (Replica{1, 0}));  // the only current replica
  EXPECT_EQ(d.loads[0].bytes, 100u);
  EXPECT_DOUBLE_EQ(d.loads[0].seconds, 1);
  ASSERT_EQ(d.drops.size(), 1u);
  EXPECT_EQ(d.drops[0].to, (Replica{1, 0}));
  EXPECT_FALSE(d.drops[0].has_source);
  EXPECT_EQ(d.bytes_loaded(), 100u);
  // The same plan: nothing moves, Eq. 4 reads C < C: no migration.
  const MigrationDecision same = decide_migration(k.cur, k.cur, k.load, {100}, k.costs);
  EXPECT_FALSE(same.migrate);
  EXPECT_TRUE(same.loads.empty() && same.drops.empty());
}

TEST(Migration, BadCostsAreErrors) {
  Case k;
  k.costs.gpu_io_bytes_per_s = {{100}, {0}};
  EXPECT_EQ(test::error_of([&] { k.decide(1); }), "migration: server 1 GPU 0: the I/O speed must be positive");
  k.costs.gpu_io_bytes_per_s = {{100}};
  EXPECT_EQ(test::error_of([&] { k.decide(1); }), "migration: no I/O speed for server 1 GPU 0");
  EXPECT_THROW(decide_migration(k.cur, k.plan, k.load, {100, 100}, k.costs), Error);
}

}  // namespace
}  // namespace moesim
