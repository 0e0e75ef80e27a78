// cumsum (policies/routing/cumsum.cpp): M from the cumulative router probability (Cache-Conditional
// Experts, Alg. 2, Eq. 8): a peaky distribution leaves no room, a flat one lets a low-ranked cached
// expert in (App. B, Fig. 12b).
#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/policies/routing_test_util.h"

namespace moesim {
namespace {

TEST(Cumsum, PeakyDistributionKeepsTheRoutersChoice) {
  test::HandTokens h(2, 8);
  h.add({0, 1}, {10, 2, 0, 0, 0, 0, 0, 0});  // P(E1) > 0.99: M = 1
  EXPECT_EQ(test::route_tokens("cumsum:p=0.9,J=1", h, {7}), (std::vector<uint16_t>{0, 1}));
}

TEST(Cumsum, FlatDistributionPromotesALowRankedCachedExpert) {
  test::HandTokens h(2, 8);
  h.add({0, 1}, {1, 1, 1, 1, 1, 1, 1, 1});  // cumulative 0.875 at rank 7: M = 8
  EXPECT_EQ(test::route_tokens("cumsum:p=0.9,J=1", h, {7}), (std::vector<uint16_t>{0, 7}));
  // p = 0.8: M = 7 (7/8 >= 0.8) does not reach expert 7 (rank 8), which stays out.
  EXPECT_EQ(test::route_tokens("cumsum:p=0.8,J=1", h, {7}), (std::vector<uint16_t>{0, 1}));
}

TEST(Cumsum, MiddleOfTheRoadDistributionStopsAtItsThreshold) {
  // Probabilities 0.4, 0.3, 0.2, 0.1 (logits = log p): p = 0.85 -> M = 3.
  test::HandTokens h(2, 4);
  h.add({0, 1}, {std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)});
  EXPECT_EQ(test::route_tokens("cumsum:p=0.85,J=1", h, {2, 3}), (std::vector<uint16_t>{0, 2}));
  EXPECT_EQ(test::route_tokens("cumsum:p=0.65,J=1", h, {2, 3}), (std::vector<uint16_t>{0, 1}));
}

TEST(Cumsum, RefusesATraceWithoutLogits) {
  test::HandTokens h(2, 4);
  h.add({0, 1}, {}, {0.6f, 0.4f});
  EXPECT_THROW(test::route_tokens("cumsum", h, {2}), Error);
}

}  // namespace
}  // namespace moesim
