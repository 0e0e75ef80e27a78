// core/routing_metrics and derive_demands: deviation and lifetimes worked by hand.
#include "core/routing_metrics.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "core/routing.h"
#include "tests/policies/routing_test_util.h"

namespace moesim {
namespace {

TEST(RoutingDeviation, CountsChangedSelectionsMassAndRanks) {
  test::HandTokens h(2, 4);
  h.add({0, 1}, {}, {0.75f, 0.25f});
  h.add({2, 3}, {}, {0.5f, 0.5f});
  const InvocationTokens tok = h.invocation();
  const std::vector<uint16_t> out{0, 2, 2, 3};  // token 1: rank 1 (weight 0.25) replaced; token 2 unchanged
  RoutingDeviation d;
  d.add(tok, out);
  EXPECT_EQ(d.selections, 2u);
  EXPECT_EQ(d.changed, 1u);
  EXPECT_EQ(d.removed, 1u);
  EXPECT_DOUBLE_EQ(d.mass_mean(), 0.125);
  EXPECT_NEAR(d.mass_p95(), 0.25, 1e-4);
  EXPECT_EQ(d.rank_hist, (std::vector<uint64_t>{0, 1}));
  // A reordering is no change.
  RoutingDeviation e;
  e.add(tok, std::vector<uint16_t>{1, 0, 3, 2});
  EXPECT_EQ(e.changed, 0u);
}

TEST(DeriveDemands, FirstAppearanceWithTokenCountsAndDuplicatesRejected) {
  std::vector<uint32_t> pos(8, kNoSlot);
  std::vector<ExpertDemand> d;
  derive_demands(std::vector<uint16_t>{3, 1, 1, kNoExpert, 5, 3}, 2, 8, pos, d);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].expert, 3);
  EXPECT_EQ(d[0].tokens, 2u);
  EXPECT_EQ(d[1].expert, 1);
  EXPECT_EQ(d[1].tokens, 2u);
  EXPECT_EQ(d[2].expert, 5);
  EXPECT_THROW(derive_demands(std::vector<uint16_t>{2, 2}, 2, 8, pos, d), Error);
  EXPECT_THROW(derive_demands(std::vector<uint16_t>{1, 4, 4, 4}, 2, 8, pos, d), Error);
  EXPECT_THROW(derive_demands(std::vector<uint16_t>{9, 1}, 2, 8, pos, d), Error);
  for (uint32_t p : pos) EXPECT_EQ(p, kNoSlot);
}

TEST(LifetimeTracker, MeanSdAndCensored) {
  LifetimeTracker t(4);
  t.admit(0, 0);
  t.admit(1, 2);
  t.admit(0, 5);  // already resident: no new residency
  t.evict(0, 10);  // 10
  t.evict(1, 8);   // 6
  t.admit(2, 3);   // still resident at the end
  t.evict(3, 9);   // never admitted: ignored
  const LifetimeStats s = t.finish();
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.censored, 1u);
  EXPECT_DOUBLE_EQ(s.mean, 8.0);
  EXPECT_NEAR(s.sd(), std::sqrt(8.0), 1e-12);
}

}  // namespace
}  // namespace moesim
