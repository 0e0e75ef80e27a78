// cache-prior (policies/routing/cache_prior.cpp): Eq. 9-10 of Mixture of Cache-Conditional Experts, worked
// by hand; lambda = 0 is the plain routing even where logits disagree with the recorded top-k.
#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/policies/routing_test_util.h"

namespace moesim {
namespace {

TEST(CachePrior, BoostIsLambdaTimesTheRunningLogitRange) {
  // z = [4, 3, 2.5, 0]: range 4. lambda = 0.2 -> boost 0.8: cached E3 (2.5 + 0.8 = 3.3) beats E2 (3).
  test::HandTokens h(2, 4);
  h.add({0, 1}, {4, 3, 2.5f, 0});
  EXPECT_EQ(test::route_tokens("cache-prior:lambda=0.2,J=1", h, {2}), (std::vector<uint16_t>{0, 2}));
  // lambda = 0.1 -> boost 0.4: 2.9 < 3, no change.
  EXPECT_EQ(test::route_tokens("cache-prior:lambda=0.1,J=1", h, {2}), (std::vector<uint16_t>{0, 1}));
  // A fixed delta replaces the running range: 0.1 x 10 = 1.
  EXPECT_EQ(test::route_tokens("cache-prior:lambda=0.1,J=1,delta=10", h, {2}), (std::vector<uint16_t>{0, 2}));
}

TEST(CachePrior, RunningAverageSpansTokensOfTheLayer) {
  // Token 1: range 10; token 2: range 2 -> Delta = 6 at token 2. lambda = 0.5 -> boost 3 at token 2
  // (its own range alone would give 1): E3 (0 + 3) beats E2 (2).
  test::HandTokens h(2, 4);
  h.add({0, 1}, {10, 9, 8, 0});
  h.add({0, 1}, {2, 1.9f, 0, 0.5f});
  const auto out = test::route_tokens("cache-prior:lambda=0.5,J=1", h, {2});
  EXPECT_EQ(std::vector<uint16_t>(out.begin() + 2, out.end()), (std::vector<uint16_t>{0, 2}));
}

TEST(CachePrior, TopJIsAlwaysKept) {
  // Range 10, lambda = 1: boost 10. J = 0: E3 (12.5) and E4 (12) beat E1 (4); J = 1 boosts E1 too (14).
  test::HandTokens h(2, 5);
  h.add({0, 1}, {4, 3, 2.5f, 2, -6});
  EXPECT_EQ(test::route_tokens("cache-prior:lambda=1,J=1", h, {2, 3}), (std::vector<uint16_t>{0, 2}));
  EXPECT_EQ(test::route_tokens("cache-prior:lambda=1,J=0", h, {2, 3}), (std::vector<uint16_t>{2, 3}));
}

TEST(CachePrior, LambdaZeroKeepsTheRecordedTopKEvenAgainstItsLogits) {
  // The logits rank E4 first, the trace recorded [E1, E2]: the recorded selection is ground truth.
  test::HandTokens h(2, 4);
  h.add({0, 1}, {1, 0.5f, 0, 7});
  EXPECT_EQ(test::route_tokens("cache-prior:lambda=0", h, {3}), (std::vector<uint16_t>{0, 1}));
}

TEST(CachePrior, RefusesATraceWithoutLogitsWithTheFix) {
  test::HandTokens h(2, 4);
  h.add({0, 1}, {}, {0.6f, 0.4f});
  try {
    test::route_tokens("cache-prior", h, {2});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--logits-for"), std::string::npos);
  }
  EXPECT_THROW(test::route_tokens("cache-prior:lambda=1.5", h, {2}), Error);
}

TEST(Prune, DropsRanksFromH) {
  test::HandTokens h(4, 8);
  h.add({5, 1, 2, 3}, {}, {0.4f, 0.3f, 0.2f, 0.1f});
  EXPECT_EQ(test::route_tokens("prune:h=3", h, {}),
            (std::vector<uint16_t>{5, 1, kNoExpert, kNoExpert}));
  EXPECT_EQ(test::route_tokens("prune:h=5", h, {}), h.ids);
  EXPECT_THROW(test::route_tokens("prune:h=1", h, {}), Error);
}

}  // namespace
}  // namespace moesim
