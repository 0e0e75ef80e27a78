// Conditional Poisson sampling: the DP's inclusion probabilities against exact enumeration, and the
// sampler's empirical frequencies against them within binomial tolerances.
#include "traces/conditional_poisson.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "base/error.h"
#include "tests/traces/conditional_poisson_enumeration.h"

namespace moesim::traces {
namespace {

std::vector<CpUnit> example_units() {
  // Experts 0..7: a pair (1, 4) with a strong pair factor, a pair (2, 6), singles elsewhere.
  return {{1, 4, 0.7, 0.3, 0.7 * 0.3 * 5.0}, {2, 6, 1.5, 0.2, 1.5 * 0.2 * 0.5}, {0, kNoExpert, 0.9, 0, 0},
          {3, kNoExpert, 0.05, 0, 0},        {5, kNoExpert, 2.5, 0, 0},         {7, kNoExpert, 1.1, 0, 0}};
}

TEST(ConditionalPoisson, InclusionMatchesEnumerationForSingles) {
  const std::vector<double> w = {0.3, 1.7, 0.01, 4.0, 0.9, 1.0, 0.0, 2.2, 0.6, 0.45};
  for (uint32_t k = 1; k <= 6; ++k) {
    const auto units = single_units(w);
    EXPECT_EQ(units.size(), 9u);  // w = 0 is left out
    const CpInclusion inc = cp_inclusion(units, k, 10);
    const Enumerated ex = enumerate_subsets(units, k, 10);
    for (size_t i = 0; i < 10; ++i)
      EXPECT_NEAR(inc.expert[i], ex.expert[i], 1e-12) << "k=" << k << " i=" << i;
    double sum = 0;
    for (double x : inc.expert) sum += x;
    EXPECT_NEAR(sum, k, 1e-12);
  }
}

TEST(ConditionalPoisson, InclusionMatchesEnumerationWithPairs) {
  const auto units = example_units();
  for (uint32_t k = 1; k <= 5; ++k) {
    const CpInclusion inc = cp_inclusion(units, k, 8);
    const Enumerated ex = enumerate_subsets(units, k, 8);
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(inc.expert[i], ex.expert[i], 1e-12) << "k=" << k;
    EXPECT_NEAR(inc.pair[0], ex.joint(1, 4), 1e-12);
    EXPECT_NEAR(inc.pair[1], ex.joint(2, 6), 1e-12);
  }
}

TEST(ConditionalPoisson, ScaleOfWeightsDoesNotMatterAndHugeTopKDoesNotOverflow) {
  // 300 experts, top-150, weights spanning 1e-8..1e8: products overflow a double without the per-row
  // rescaling of the DP.
  std::vector<double> w(300);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::pow(10.0, -8.0 + 16.0 * static_cast<double>(i) / 299.0);
  const CpInclusion a = cp_inclusion(single_units(w), 150, 300);
  for (double& x : w) x *= 1e30;
  const CpInclusion b = cp_inclusion(single_units(w), 150, 300);
  double sum = 0;
  for (size_t i = 0; i < 300; ++i) {
    ASSERT_TRUE(std::isfinite(a.expert[i]));
    EXPECT_NEAR(a.expert[i], b.expert[i], 1e-9);
    sum += a.expert[i];
  }
  EXPECT_NEAR(sum, 150.0, 1e-8);
  CpSampler s(single_units(w), 150);
  Rng rng(1);
  std::vector<uint32_t> out;
  s.draw(rng, out);
  EXPECT_EQ(out.size(), 150u);
}

// Every subset's empirical frequency against its exact probability: N draws, each count binomial(N, P(S));
// a 5-sigma band fails by chance with probability < 6e-7 per subset (56 subsets here).
TEST(ConditionalPoisson, SamplerDrawsEachSubsetWithItsExactProbability) {
  const auto units = example_units();
  const uint32_t k = 3;
  const Enumerated ex = enumerate_subsets(units, k, 8);
  CpSampler sampler(units, k);
  Rng rng(20261121);
  const int N = 200000;
  std::map<uint32_t, int> seen;
  std::vector<uint32_t> out;
  for (int n = 0; n < N; ++n) {
    out.clear();
    sampler.draw(rng, out);
    ASSERT_EQ(out.size(), k);
    uint32_t mask = 0;
    for (uint32_t e : out) {
      ASSERT_FALSE(mask & (1u << e)) << "duplicate expert";
      mask |= 1u << e;
    }
    ++seen[mask];
  }
  for (const auto& [mask, p] : ex.subset) {
    const double sd = std::sqrt(N * p * (1 - p));
    EXPECT_NEAR(seen[mask], N * p, 5 * sd + 1) << "subset mask " << mask;
  }
  for (const auto& [mask, c] : seen) EXPECT_TRUE(ex.subset.count(mask)) << "impossible subset drawn";
}

TEST(ConditionalPoisson, SameSeedSameDrawsDifferentSeedDifferentDraws) {
  CpSampler s(example_units(), 3);
  auto run = [&](uint64_t seed) {
    Rng rng(seed);
    std::vector<uint32_t> out;
    for (int i = 0; i < 100; ++i) s.draw(rng, out);
    return out;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(ConditionalPoisson, RejectsImpossibleSizes) {
  const std::vector<double> w = {1.0, 2.0, 0.0};
  EXPECT_THROW(CpSampler(single_units(w), 3), Error);
  EXPECT_THROW(cp_inclusion(single_units(w), 3, 3), Error);
  EXPECT_NO_THROW(CpSampler(single_units(w), 2));
}

}  // namespace
}  // namespace moesim::traces
