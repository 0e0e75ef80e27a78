// random-resident (policies/routing/random_resident.cpp), BuddyMoE's Random baseline: a missing expert
// becomes a resident expert the token does not use, drawn uniformly; resident experts stay; nothing is
// replaced when no candidate is resident or rho = 0; the same seed gives the same routing.
#include <gtest/gtest.h>

#include <map>

#include "tests/policies/routing_test_util.h"

namespace moesim {
namespace {

TEST(RandomResident, ReplacesOnlyMissingExpertsByResidentOnesTheTokenDoesNotUse) {
  test::HandTokens h(2, 8);
  for (uint16_t a = 0; a < 8; ++a)
    for (uint16_t b = 0; b < 8; ++b)
      if (a != b) h.add({a, b});
  const std::set<uint16_t> cached{1, 4, 6};
  const auto out = test::route_tokens("random-resident:seed=3", h, cached);
  ASSERT_EQ(out.size(), h.ids.size());
  for (size_t t = 0; t < out.size() / 2; ++t) {
    EXPECT_NE(out[2 * t], out[2 * t + 1]) << "token " << t;
    for (int s = 0; s < 2; ++s) {
      const uint16_t before = h.ids[2 * t + s], after = out[2 * t + s];
      if (cached.count(before)) {
        EXPECT_EQ(after, before) << "a resident expert is kept, token " << t;
      } else {
        EXPECT_TRUE(cached.count(after)) << "a missing expert becomes a resident one, token " << t;
      }
    }
  }
}

TEST(RandomResident, KeepsTheExpertWhenNoCandidateIsResidentOrRhoIsZero) {
  test::HandTokens one(2, 4);
  one.add({0, 1});
  // Only the token's own other expert is resident: no candidate.
  EXPECT_EQ(test::route_tokens("random-resident", one, {1}), (std::vector<uint16_t>{0, 1}));
  test::HandTokens h(2, 4);
  h.add({0, 1});
  h.add({2, 3});
  EXPECT_EQ(test::route_tokens("random-resident:rho=0", h, {0, 1, 2}), h.ids);
  // rho = 1: a token with two missing experts replaces only the first (rank order).
  const auto out = test::route_tokens("random-resident:rho=1", h, {0, 1});
  EXPECT_EQ(out[3], 3);
  EXPECT_TRUE(out[2] == 0 || out[2] == 1);
}

TEST(RandomResident, DrawsUniformlyAndReproducibly) {
  test::HandTokens h(1, 6);
  for (int i = 0; i < 6000; ++i) h.add({0});
  const std::set<uint16_t> cached{2, 3, 5};
  const auto a = test::route_tokens("random-resident:seed=7", h, cached);
  EXPECT_EQ(a, test::route_tokens("random-resident:seed=7", h, cached));
  EXPECT_NE(a, test::route_tokens("random-resident:seed=8", h, cached));
  std::map<uint16_t, int> n;
  for (uint16_t e : a) ++n[e];
  ASSERT_EQ(n.size(), 3u);
  // 2,000 expected each; the binomial sd is 36.5, so +-200 is over 5 sd.
  for (const auto& [e, c] : n) EXPECT_NEAR(c, 2000, 200) << "expert " << e;
}

}  // namespace
}  // namespace moesim
