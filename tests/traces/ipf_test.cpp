// The modified IPF of ZipMoE Appendix D (Eq. (24)): fitted weights reproduce the target inclusion
// probabilities, checked by exact enumeration of every k-subset (n <= 10) to 1e-9.
#include "traces/ipf.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "tests/traces/conditional_poisson_enumeration.h"

namespace moesim::traces {
namespace {

// Random feasible targets: positive weights turned into inclusion probabilities by water-filling.
std::vector<double> random_targets(uint64_t seed, uint32_t n, uint32_t k, double skew) {
  Rng rng(seed);
  std::vector<double> p(n);
  for (auto& x : p) x = std::exp(skew * rng.normal());
  return inclusion_from_weights(p, k);
}

TEST(Ipf, FittedWeightsReproduceTargetsByExactEnumeration) {
  int cases = 0;
  for (uint32_t n : {4u, 7u, 10u})
    for (uint32_t k = 1; k < n; ++k)
      for (double skew : {0.3, 1.5}) {
        const std::vector<double> f = random_targets(n * 100 + k, n, k, skew);
        const IpfResult r = fit_max_entropy(f, k);
        ASSERT_TRUE(r.converged) << "n=" << n << " k=" << k << " residual " << r.max_residual;
        const Enumerated ex = enumerate_subsets(r.units, k, n);
        for (uint32_t i = 0; i < n; ++i) EXPECT_NEAR(ex.expert[i], f[i], 1e-9) << "n=" << n << " k=" << k;
        // q_i = w_i / (1 + w_i) of the paper are valid probabilities.
        for (double w : r.w) EXPECT_TRUE(w >= 0 && std::isfinite(w));
        ++cases;
      }
  EXPECT_EQ(cases, 2 * (3 + 6 + 9));
}

TEST(Ipf, ZeroTargetsStayZeroAndTargetsNearTheCapConverge) {
  std::vector<double> f = {0.999, 0.0, 0.7, 0.2, 0.101, 0.0, 0.5, 0.3, 0.15, 0.05};  // sum 3
  const IpfResult r = fit_max_entropy(f, 3);
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(r.w[1], 0.0);
  EXPECT_EQ(r.w[5], 0.0);
  const Enumerated ex = enumerate_subsets(r.units, 3, 10);
  for (uint32_t i = 0; i < 10; ++i) EXPECT_NEAR(ex.expert[i], f[i], 1e-9);
}

TEST(Ipf, PairTargetsAreFittedTogetherWithMarginals) {
  const uint32_t n = 10, k = 4;
  const std::vector<double> f = random_targets(99, n, k, 1.0);
  // One positively and one negatively associated pair.
  const std::vector<PairTarget> pairs = {{2, 5, 2.5 * f[2] * f[5]}, {0, 9, 0.3 * f[0] * f[9]}};
  ASSERT_LT(pairs[0].f_ab, std::min(f[2], f[5]));
  const IpfResult r = fit_max_entropy(f, k, pairs);
  ASSERT_TRUE(r.converged) << r.max_residual;
  const Enumerated ex = enumerate_subsets(r.units, k, n);
  for (uint32_t i = 0; i < n; ++i) EXPECT_NEAR(ex.expert[i], f[i], 1e-9);
  EXPECT_NEAR(ex.joint(2, 5), pairs[0].f_ab, 1e-9);
  EXPECT_NEAR(ex.joint(0, 9), pairs[1].f_ab, 1e-9);
}

TEST(Ipf, ConvergesAtModelScale) {
  // 128 experts, top-8, Zipf(1.2) popularity: the shape of the bundled traces.
  std::vector<double> p(128);
  for (size_t r = 0; r < p.size(); ++r) p[r] = std::pow(static_cast<double>(r + 1), -1.2);
  const std::vector<double> f = inclusion_from_weights(p, 8);
  EXPECT_DOUBLE_EQ(f[0], kMaxInclusion);  // the top expert is capped
  const IpfResult r = fit_max_entropy(f, 8);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.max_residual, 1e-12);
  const CpInclusion inc = cp_inclusion(r.units, 8, 128);
  for (size_t i = 0; i < 128; ++i) EXPECT_NEAR(inc.expert[i], f[i], 1e-9);
}

TEST(Ipf, WaterFillingSumsToKAndKeepsProportions) {
  const std::vector<double> p = {10, 1, 1, 2, 0, 4};
  const std::vector<double> f = inclusion_from_weights(p, 2, 0.9);
  // Expert 0 is capped at 0.9; the rest share 1.1 in proportion 1:1:2:0:4 (sum 8).
  EXPECT_DOUBLE_EQ(f[0], 0.9);
  EXPECT_NEAR(f[1], 1.1 / 8, 1e-15);
  EXPECT_NEAR(f[3], 2.2 / 8, 1e-15);
  EXPECT_EQ(f[4], 0.0);
  EXPECT_NEAR(f[5], 4.4 / 8, 1e-15);
  // Uncapped case: plain proportional scaling.
  const std::vector<double> g = inclusion_from_weights(std::vector<double>{1, 1, 1, 1}, 2);
  for (double x : g) EXPECT_DOUBLE_EQ(x, 0.5);
  EXPECT_THROW(inclusion_from_weights(std::vector<double>{1, 1, 0}, 2), Error);  // only 2 positive
  EXPECT_THROW(inclusion_from_weights(std::vector<double>{1, -1, 1}, 1), Error);
}

TEST(Ipf, RejectsInfeasibleTargets) {
  EXPECT_THROW(fit_max_entropy(std::vector<double>{0.5, 0.5, 0.5}, 2), Error);  // sums to 1.5
  EXPECT_THROW(fit_max_entropy(std::vector<double>{1.0, 0.5, 0.5}, 2), Error);  // f = 1
  EXPECT_THROW(
      fit_max_entropy(std::vector<double>{0.5, 0.5, 0.5, 0.5}, 2, std::vector<PairTarget>{{0, 1, 0.6}}),
      Error);  // joint above a marginal
  EXPECT_THROW(fit_max_entropy(std::vector<double>{0.5, 0.5, 0.5, 0.5}, 2,
                               std::vector<PairTarget>{{0, 1, 0.2}, {1, 2, 0.2}}),
               Error);  // pairs share expert 1
}

}  // namespace
}  // namespace moesim::traces

namespace moesim::traces {
namespace {

TEST(Ipf, Eq24ProportionalUpdateAndOddsUpdateReachTheSameWeights) {
  const std::vector<double> f = random_targets(5, 10, 3, 1.2);
  IpfOptions prop;
  prop.update = IpfUpdate::kProportional;
  prop.max_iterations = 200000;
  const IpfResult a = fit_max_entropy(f, 3, {}, prop);
  const IpfResult b = fit_max_entropy(f, 3);
  ASSERT_TRUE(a.converged);
  ASSERT_TRUE(b.converged);
  EXPECT_LT(b.iterations, a.iterations);
  // Both are scaled to max w = 1, and w* is unique up to scale (Appendix D, citing BM94).
  for (size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(a.w[i], b.w[i], 1e-8 * std::max(1.0, b.w[i]));
}

}  // namespace
}  // namespace moesim::traces

namespace moesim::traces {
namespace {

// End to end: fit w to targets f, draw N sets; expert e's frequency is binomial(N, f_e) / N, checked at 5
// standard deviations (a chance failure among 40 experts has probability < 3e-5).
TEST(Ipf, SampledInclusionFrequenciesMatchTheTargets) {
  const uint32_t n = 40, k = 6;
  const std::vector<double> f = random_targets(77, n, k, 1.3);
  const IpfResult r = fit_max_entropy(f, k);
  ASSERT_TRUE(r.converged);
  CpSampler s(r.units, k);
  Rng rng(4242);
  const int N = 100000;
  std::vector<int> seen(n, 0);
  std::vector<uint32_t> out;
  for (int i = 0; i < N; ++i) {
    out.clear();
    s.draw(rng, out);
    ASSERT_EQ(out.size(), k);
    for (uint32_t e : out) ++seen[e];
  }
  for (uint32_t e = 0; e < n; ++e)
    EXPECT_NEAR(seen[e] / double(N), f[e], 5 * std::sqrt(f[e] * (1 - f[e]) / N)) << "expert " << e;
}

}  // namespace
}  // namespace moesim::traces
