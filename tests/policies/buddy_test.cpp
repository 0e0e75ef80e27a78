// buddy (policies/routing/buddy.cpp) and its profile (traces/buddy_profile.cpp): BuddyMoE Alg. 1 by hand;
// never the same expert twice in a token, never more than rho replacements, beta = 0 never replaces, tau
// above every TAE reproduces the plain routing.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "base/error.h"
#include "tests/policies/routing_test_util.h"
#include "traces/buddy_profile.h"
#include "traces/trace_io.h"

namespace moesim {
namespace {

// A profile of one layer of 6 experts with hand-written buddy lists, written to a temporary file.
std::string write_profile(const std::vector<std::vector<uint16_t>>& buddies, double tae_level = 0.5) {
  Json j;
  j["format"] = "moesim buddy profile v1";
  j["layers"] = 1;
  j["experts"] = buddies.size();
  j["top_k"] = 2;
  Json l;
  l["buddies"] = buddies;
  l["tae_percentiles"] = std::vector<double>(101, tae_level);
  j["per_layer"] = Json::array({l});
  // One file per test (ctest runs tests in parallel processes).
  const std::string path = testing::TempDir() + "/buddies_" +
                           testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
  std::ofstream(path) << j.dump();
  return path;
}

// Tokens over 6 experts, top-2, weights 0.5/0.5 (TAE 1) unless given.
const std::vector<std::vector<uint16_t>> kBuddies{{1, 2, 3}, {0, 2}, {3, 0}, {2, 4}, {5, 3}, {4, 0}};

TEST(Buddy, ReplacesAMissingExpertByTheFirstResidentBuddyNotAlreadyUsed) {
  const std::string prof = write_profile(kBuddies);
  test::HandTokens h(2, 6);
  h.add({0, 1}, {}, {0.5f, 0.5f});
  // Expert 0 missing; buddies 1 (already the token's), 2 (resident): 0 -> 2. beta = 1: the gate never stops.
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=1", h, {1, 2}), (std::vector<uint16_t>{2, 1}));
  // H = 1 only looks at buddy 1 (the token's own): no replacement.
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=1,H=1", h, {1, 2}), (std::vector<uint16_t>{0, 1}));
}

TEST(Buddy, NeverGivesATokenTheSameExpertTwiceAndNeverExceedsRho) {
  const std::string prof = write_profile(kBuddies);
  test::HandTokens h(2, 6);
  for (uint16_t a = 0; a < 6; ++a)  // every ordered pair of distinct experts
    for (uint16_t b = 0; b < 6; ++b)
      if (a != b) h.add({a, b}, {}, {0.5f, 0.5f});
  for (uint32_t rho : {0u, 1u, 2u})
    for (const std::set<uint16_t>& cached : std::vector<std::set<uint16_t>>{{0}, {2, 3}, {0, 2, 4}, {5}}) {
      const auto out = test::route_tokens("buddy:profile=" + prof + ",beta=1,rho=" + std::to_string(rho), h, cached);
      for (size_t t = 0; t < out.size() / 2; ++t) {
        EXPECT_NE(out[2 * t], out[2 * t + 1]) << "token " << t;
        uint32_t changed = (out[2 * t] != h.ids[2 * t]) + (out[2 * t + 1] != h.ids[2 * t + 1]);
        EXPECT_LE(changed, rho);
        for (int s = 0; s < 2; ++s)  // a replacement is always resident
          if (out[2 * t + s] != h.ids[2 * t + s]) {
            EXPECT_TRUE(cached.count(out[2 * t + s]));
          }
      }
    }
}

TEST(Buddy, BetaZeroNeverReplaces) {
  const std::string prof = write_profile(kBuddies);
  test::HandTokens h(2, 6);
  h.add({0, 1}, {}, {0.5f, 0.5f});
  h.add({4, 5}, {}, {0.5f, 0.5f});
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=0", h, {1, 2, 3}), h.ids);
}

TEST(Buddy, ResidencyGateComparesTheMissingShareWithBeta) {
  const std::string prof = write_profile(kBuddies);
  test::HandTokens h(2, 6);
  h.add({0, 1}, {}, {0.5f, 0.5f});  // requested {0, 1}; 0 missing: delta = 0.5
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=0.5", h, {1, 2}), h.ids);  // 0.5 >= 0.5: stop
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=0.6", h, {1, 2}), (std::vector<uint16_t>{2, 1}));
}

TEST(Buddy, TauAboveEveryTaeReproducesThePlainRouting) {
  const std::string prof = write_profile(kBuddies, 0.3);
  test::HandTokens h(2, 6);
  h.add({0, 1}, {}, {0.9f, 0.1f});  // TAE = 0.469
  h.add({3, 4}, {}, {0.5f, 0.5f});  // TAE = 1
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=1,tau=1", h, {1, 2}), h.ids);
  // tau = 0.4: both pass (0.469 and 1 > 0.4): 0 -> 2 (buddy 1 is the token's own), 3 -> 2 (rho = 1 keeps 4).
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=1,tau=0.4", h, {1, 2}),
            (std::vector<uint16_t>{2, 1, 2, 4}));
  // tau = 0.5: the first token (0.469) is stopped.
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=1,tau=0.5", h, {1, 2}),
            (std::vector<uint16_t>{0, 1, 2, 4}));
  // tau_pct reads the profile's percentile (0.3 everywhere here).
  EXPECT_EQ(test::route_tokens("buddy:profile=" + prof + ",beta=1,tau=5,tau_pct=50", h, {1, 2})[0], 2);
}

TEST(Buddy, RefusesAMissingOrMismatchedProfile) {
  test::HandTokens h(2, 8);
  h.add({0, 1}, {}, {0.5f, 0.5f});
  EXPECT_THROW(test::route_tokens("buddy", h, {}), Error);
  EXPECT_THROW(test::route_tokens("buddy:profile=" + write_profile(kBuddies), h, {}), Error);  // 6 != 8 experts
}

TEST(BuddyProfile, CoactivationCountsQAndCftListsByHand) {
  // Layer 0, top-2 over 4 experts: tokens {0,1}, {0,1}, {0,2}, {3,2}. For pivot 0 (epsilon 0): M(0,1) = 2,
  // M(0,2) = 1 -> q = 2/3, 1/3. alpha = 0.6: B(0) = [1]; alpha = 0.9: [1, 2].
  traces::TraceInfo info;
  info.layers = 1;
  info.experts = 4;
  info.top_k = 2;
  traces::TraceBuilder b(info, true, false, "hand");
  const std::vector<std::vector<uint32_t>> toks{{0, 1}, {0, 1}, {0, 2}, {3, 2}};
  for (uint32_t s = 0; s < toks.size(); ++s)
    b.add(0, traces::Phase::kDecode, s, 0, toks[s], std::vector<float>{0.75f, 0.25f}, {}, s + 1);
  const traces::Trace t = std::move(b).finish();
  traces::BuddyOptions o;
  o.epsilon = 0;
  o.alpha = 0.6;
  auto p = traces::build_buddy_profile(t, o, "hand");
  EXPECT_EQ(p.layer[0].activations, (std::vector<uint64_t>{3, 2, 2, 1}));
  EXPECT_EQ(p.layer[0].coact_bin[0][1], 2u);
  EXPECT_DOUBLE_EQ(p.layer[0].coact_prob[0][1], 0.5);  // 2 x min(0.75, 0.25)
  EXPECT_EQ(p.layer[0].buddies[0], (std::vector<uint16_t>{1}));
  EXPECT_NEAR(p.layer[0].buddy_q[0][0], 2.0 / 3, 1e-12);
  o.alpha = 0.9;
  p = traces::build_buddy_profile(t, o, "hand");
  EXPECT_EQ(p.layer[0].buddies[0], (std::vector<uint16_t>{1, 2}));
  o.k_max = 1;
  p = traces::build_buddy_profile(t, o, "hand");
  EXPECT_EQ(p.layer[0].buddies[0], (std::vector<uint16_t>{1}));
  // Round trip through JSON keeps the lists.
  const auto back = traces::buddy_profile_from_json(traces::to_json(p), "x");
  EXPECT_EQ(back.layer[0].buddies, p.layer[0].buddies);
  // TAE of (0.75, 0.25) over k = 2.
  EXPECT_NEAR(p.layer[0].tae_percentiles[50], -(0.75 * std::log(0.75) + 0.25 * std::log(0.25)) / std::log(2.0), 1e-9);
}

}  // namespace
}  // namespace moesim
