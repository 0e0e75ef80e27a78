// max-rank and promote (policies/routing/max_rank.cpp, promote.cpp): the worked example of Mixture of
// Cache-Conditional Experts, Appendix B, exactly; M = K is the plain routing; no logits, no rank beyond k.
#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/policies/routing_test_util.h"

namespace moesim {
namespace {

// r = [E1..E6] (ids 0..5, logits decreasing), C = {E3, E4, E6}.
const std::vector<float> kZ{6, 5, 4, 3, 2, 1};
const std::set<uint16_t> kCache{2, 3, 5};

TEST(MaxRank, AppendixBWorkedExampleSelectsE1AndE3) {
  test::HandTokens h(2, 6);
  h.add({0, 1}, kZ);
  // K = 2: {E1, E3}; E1 keeps its slot, E3 takes E2's.
  EXPECT_EQ(test::route_tokens("max-rank:M=4,J=1", h, kCache), (std::vector<uint16_t>{0, 2}));
}

TEST(MaxRank, AppendixBRankingIsE1E3E4E2E5E6) {
  // The first K of the ranking r' is the selection for every K: read r' off K = 1..6.
  const std::vector<uint16_t> want{0, 2, 3, 1, 4, 5};
  for (uint32_t K = 1; K <= 6; ++K) {
    test::HandTokens h(K, 6);
    std::vector<uint16_t> top;
    for (uint16_t e = 0; e < K; ++e) top.push_back(e);
    h.add(top, kZ);
    const auto out = test::route_tokens("max-rank:M=4,J=1", h, kCache);
    const std::set<uint16_t> got(out.begin(), out.end());
    const std::set<uint16_t> expect(want.begin(), want.begin() + K);
    EXPECT_EQ(got, expect) << "K = " << K;
  }
}

TEST(MaxRank, JZeroPromotesCachedExpertsAboveTheTop1) {
  test::HandTokens h(2, 6);
  h.add({0, 1}, kZ);
  EXPECT_EQ(test::route_tokens("max-rank:M=4,J=0", h, kCache), (std::vector<uint16_t>{2, 3}));
}

TEST(MaxRank, MEqualKIsThePlainRouting) {
  test::HandTokens h(2, 6);
  h.add({0, 1}, kZ);
  h.add({4, 5}, {1, 2, 3, 4, 6, 5});
  EXPECT_EQ(test::route_tokens("max-rank:M=2,J=0", h, kCache), h.ids);
}

TEST(MaxRank, WithoutLogitsMBeyondKIsRefusedAndMAtMostKChangesNothing) {
  test::HandTokens h(2, 6);
  h.add({0, 1});
  try {
    test::route_tokens("max-rank:M=4", h, kCache);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--logits-for"), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::route_tokens("max-rank:M=2,J=0", h, {1}), h.ids);
}

TEST(Promote, EveryCachedExpertFirstTopJKept) {
  test::HandTokens h(3, 6);
  h.add({0, 1, 2}, kZ);
  // promote(r ∩ C) = [E3, E4, E6, E1, E2, E5]; then top-1: [E1, E3, E4, ...].
  EXPECT_EQ(test::route_tokens("promote:J=1", h, kCache), (std::vector<uint16_t>{0, 3, 2}));
  EXPECT_EQ(test::route_tokens("promote:J=0", h, kCache), (std::vector<uint16_t>{3, 5, 2}));
}

}  // namespace
}  // namespace moesim
