// ZipMoE's cache-pool planner (core/planning.h, policies/planning/zipmoe_planner.cpp; ZipMoE Appendix C-D):
// Alg. 2 against enumeration of Bernoulli outcomes; the conditional hit-pattern distribution against
// Monte Carlo draws of the conditional-Poisson model; the IPF-fitted q reproduce f and the product form
// of Eq. (18)/(22); Alg. 3 by hand; the bounded expectation against the literal loop of Alg. 4; the grid
// search against brute force over the grid; the parsers' errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>

#include "base/error.h"
#include "core/planning.h"
#include "policies/planning/zipmoe_planner.h"
#include "base/rng.h"
#include "tests/error_of.h"
#include "traces/conditional_poisson.h"
#include "traces/ipf.h"

namespace moesim {
namespace {

using test::error_of;

std::vector<double> random_q(uint64_t seed, size_t n) {
  Rng rng(seed);
  std::vector<double> q(n);
  for (double& x : q) x = rng.uniform();
  return q;
}

// A descending f with sum k from lognormal weights (skewed like a real rank profile).
std::vector<double> random_f(uint64_t seed, uint32_t n, uint32_t k, double skew) {
  Rng rng(seed);
  std::vector<double> p(n);
  for (double& x : p) x = std::exp(skew * rng.normal());
  std::vector<double> f = traces::inclusion_from_weights(p, k);
  std::sort(f.begin(), f.end(), std::greater<>());
  return f;
}

TEST(ZipMoePlanning, Alg2MatchesEnumerationOfBernoulliOutcomes) {
  for (size_t n : {0u, 1u, 2u, 5u, 10u}) {
    const std::vector<double> q = random_q(n + 7, n);
    const std::vector<double> phi = hit_distribution(q);
    ASSERT_EQ(phi.size(), n + 1);
    std::vector<double> want(n + 1, 0.0);
    for (uint32_t m = 0; m < (1u << n); ++m) {
      double p = 1;
      for (size_t i = 0; i < n; ++i) p *= (m >> i & 1) ? q[i] : 1 - q[i];
      want[__builtin_popcount(m)] += p;
    }
    for (size_t h = 0; h <= n; ++h) EXPECT_NEAR(phi[h], want[h], 1e-14) << "n=" << n << " h=" << h;
  }
}

TEST(ZipMoePlanning, SelectionProbabilitiesReproduceTargetsAndTheProductForm) {
  // Appendix D: the Bernoulli(q) model conditioned on k selections is P(S) ~ prod q/(1-q) (Eq. (22)),
  // the maximum-entropy form of Eq. (18) with lambda_i = log(q_i/(1-q_i)), and its marginals are f.
  for (uint32_t n : {5u, 9u, 12u})
    for (uint32_t k : {1u, 2u, 4u}) {
      const std::vector<double> f = random_f(n * 31 + k, n, k, 1.2);
      const std::vector<double> q = zipmoe_selection_probabilities(f, k);
      EXPECT_NEAR(std::accumulate(q.begin(), q.end(), 0.0), k, 1e-9);
      double z_bern = 0, z_exp = 0;
      std::vector<double> marg(n, 0.0);
      std::map<uint32_t, std::pair<double, double>> subsets;  // mask -> (Bernoulli joint, exp(sum lambda))
      for (uint32_t m = 0; m < (1u << n); ++m) {
        if (static_cast<uint32_t>(__builtin_popcount(m)) != k) continue;
        double joint = 1, lam = 0;
        for (uint32_t i = 0; i < n; ++i) {
          joint *= (m >> i & 1) ? q[i] : 1 - q[i];
          if (m >> i & 1) lam += std::log(q[i] / (1 - q[i]));
        }
        subsets[m] = {joint, std::exp(lam)};
        z_bern += joint;
        z_exp += std::exp(lam);
      }
      EXPECT_NEAR(z_bern, hit_distribution(q)[k], 1e-12);  // Phi_N(k) = P(sum X = k), Eq. (21)
      for (const auto& [m, v] : subsets) {
        const double p = v.first / z_bern;
        EXPECT_NEAR(p, v.second / z_exp, 1e-12) << "n=" << n << " k=" << k;
        for (uint32_t i = 0; i < n; ++i)
          if (m >> i & 1) marg[i] += p;
      }
      for (uint32_t i = 0; i < n; ++i)
        EXPECT_NEAR(marg[i], f[i], 1e-9) << "n=" << n << " k=" << k << " i=" << i;
    }
}

// A small planning input: N experts, k selected, 1000-byte experts, sm_fraction 0.5, rho 0.4 (so F 1000,
// C 700, S 500, E 200 bytes), one layer.
PlanningInput small_input(uint32_t n, uint32_t k, uint64_t budget, uint64_t seed = 5) {
  PlanningInput in;
  in.budget_bytes = budget;
  in.layers = 1;
  in.experts = n;
  in.k = k;
  in.expert_bytes = 1000;
  in.layout.shards = 2;
  in.layout.sm_fraction = 0.5;
  in.layout.e_ratio = 0.4;
  in.f = random_f(seed, n, k, 1.0);
  in.delays = {.c = 1.0, .v = 0.5, .u = 3.0, .L = 2, .K = 2, .n = 3};
  in.grid = 0.25;
  return in;
}

TEST(ZipMoePlanning, PoolBytesAndSizes) {
  const auto b = pool_expert_bytes(1000, small_input(8, 2, 1).layout);
  EXPECT_EQ(b, (std::array<uint64_t, kPools>{1000, 700, 500, 200}));
  // Budget 4000, F=0.25 (1000 B: 1 expert), C=0.25 (1 expert of 700), S=0.25 (2 of 500), E=0.25 (5 of 200).
  PlanningInput in = small_input(8, 2, 4000);
  const PoolPlan p = zipmoe_evaluate(in, {0.25, 0.25, 0.25, 0.25});
  EXPECT_EQ(p.experts, (std::array<uint32_t, kPools>{1, 1, 2, 5}));
  EXPECT_EQ(p.ranks, (std::array<uint32_t, kPools>{1, 1, 2, 4}));  // E cut at N = 8
  EXPECT_EQ(p.budget_bytes, (std::array<uint64_t, kPools>{1000, 1000, 1000, 1000}));
  EXPECT_EQ(p.used_bytes_per_layer(), 1000u + 700 + 1000 + 1000);
  double hits = p.expected_misses;
  for (double h : p.expected_hits) hits += h;
  EXPECT_NEAR(hits, 2.0, 1e-12);
  // Every expert of rank <= 8 is in a pool: no misses.
  EXPECT_NEAR(p.expected_misses, 0.0, 1e-12);
}

TEST(ZipMoePlanning, Alg3ByHand) {
  const PlanDelays d{.c = 1.0, .v = 0.5, .u = 3.0, .L = 2, .K = 2, .n = 3};
  // k = 6, h = (1, 1, 2, 1): n_SM = 3 * (6 - 4) = 6, n_E = 3 * 2 * (6 - 3) = 18, n_D = 3 * 2 * 5 = 30.
  // T_io = 6 * 3 + 18 * 0.5 = 27; T_dec = (18 * 0.5 + 30 * 1) / 2 = 19.5.
  EXPECT_DOUBLE_EQ(zipmoe_makespan_estimate(6, {1, 1, 2, 1}, d), 27.0);
  // All in C: no I/O, T_dec = 3 * 2 * 6 * 1 / 2 = 18.
  EXPECT_DOUBLE_EQ(zipmoe_makespan_estimate(6, {0, 6, 0, 0}, d), 18.0);
  // All full: nothing to do.
  EXPECT_DOUBLE_EQ(zipmoe_makespan_estimate(6, {6, 0, 0, 0}, d), 0.0);
  // All missed: T_io = 18 * 3 + 36 * 0.5 = 72; T_dec = (18 + 36) / 2 = 27.
  EXPECT_DOUBLE_EQ(zipmoe_makespan_estimate(6, {0, 0, 0, 0}, d), 72.0);
}

TEST(ZipMoePlanning, Alg3WithFusedReadsByHand) {
  // The same counts with the E-chunk reads on the workers (io=fused), u_dev = 2, v_dev = 0.25.
  PlanDelays d{.c = 1.0, .v = 0.5, .u = 3.0, .L = 2, .K = 2, .n = 3};
  d.fused = true;
  d.u_dev = 2.0;
  d.v_dev = 0.25;
  // h = (1, 1, 2, 1): n_SM = 6, n_E = 18, n_D = 30. T_io = 6 * 3 = 18 (SM-chunks only); T_dec = 19.5 as
  // printed; T_ssd = 6 * 2 + 18 * 0.25 = 16.5. The workers are the bottleneck: 19.5, not the thread's 27.
  EXPECT_DOUBLE_EQ(zipmoe_makespan_estimate(6, {1, 1, 2, 1}, d), 19.5);
  // All missed: T_io = 18 * 3 = 54; T_dec = (36 * 0.5 + 36) / 2 = 27; T_ssd = 36 + 9 = 45: 54, not 72.
  EXPECT_DOUBLE_EQ(zipmoe_makespan_estimate(6, {0, 0, 0, 0}, d), 54.0);
  // All in S: only E-chunk reads and decompressions. T_io = 0; T_dec = (36 * 0.5 + 36) / 2 = 27;
  // T_ssd = 36 * 0.25 = 9: 27 (the thread's estimate: max(18, 27) = 27, the same: the workers bind).
  EXPECT_DOUBLE_EQ(zipmoe_makespan_estimate(6, {0, 0, 6, 0}, d), 27.0);
  // A device whose latency is nothing (u_dev = u, v_dev = v): reads in parallel gain nothing at the device.
  d.u_dev = 3.0;
  d.v_dev = 0.5;
  EXPECT_DOUBLE_EQ(zipmoe_makespan_estimate(6, {0, 0, 0, 0}, d), 72.0);
}

TEST(ZipMoePlanning, FusedReadsExpectLessDelayWhereTheIoThreadIsTheBottleneck) {
  // Delays from an estimator with a per-read latency (100 us) and 1 GB/s: the I/O thread's serial reads
  // bind for every plan of a small budget (most of the k experts miss), so moving the E-chunk reads to the
  // 8 workers must lower the expected delay; and it never raises it anywhere.
  class Estimator final : public OpEstimator {
   public:
    double estimate(const Op& op) const override {
      if (op.kind == OpKind::kSsdRead) return 100e-6 + static_cast<double>(op.bytes) * 1e-9;
      return static_cast<double>(op.bytes) * 1e-9;  // decompression at 1 GB/s
    }
  } est;
  PlanningInput thread = small_input(10, 3, 3000);
  thread.expert_bytes = 3'000'000;
  thread.budget_bytes = 9'000'000;
  thread.delays = zipmoe_plan_delays(est, 1'000'000, thread.layout, 8, 3);
  PlanningInput fused = thread;
  fused.delays = zipmoe_plan_delays(est, 1'000'000, fused.layout, 8, 3, true);
  EXPECT_NEAR(fused.delays.u_dev, 500e-6, 1e-15);  // the SM-chunk's 500 kB at 1 GB/s, without the latency
  EXPECT_NEAR(fused.delays.v_dev, 100e-6, 1e-15);  // an E-chunk: 0.4 * 500 kB / 2 shards
  const PoolRatios r{0, 0, 1, 0};
  const double t = zipmoe_evaluate(thread, r).expected_makespan, f = zipmoe_evaluate(fused, r).expected_makespan;
  EXPECT_LT(f, 0.8 * t) << "thread " << t << " s, fused " << f << " s";
  for (const PoolRatios& q : {PoolRatios{1, 0, 0, 0}, PoolRatios{0.25, 0.25, 0.25, 0.25}, PoolRatios{0, 0.5, 0, 0.5}})
    EXPECT_LE(zipmoe_evaluate(fused, q).expected_makespan, zipmoe_evaluate(thread, q).expected_makespan + 1e-15);
  // The grid search with the same variant plans no slower than with the thread's.
  EXPECT_LE(zipmoe_plan(fused).best.expected_makespan, zipmoe_plan(thread).best.expected_makespan);
}

TEST(ZipMoePlanning, BoundedExpectationEqualsTheLiteralLoopOfAlg4) {
  int cases = 0;
  for (uint64_t budget : {1500u, 3000u, 6000u})
    for (uint32_t k : {1u, 2u, 3u}) {
      PlanningInput in = small_input(10, k, budget, budget + k);
      for (const PoolRatios& r : {PoolRatios{1, 0, 0, 0}, PoolRatios{0.25, 0.25, 0.25, 0.25},
                                  PoolRatios{0, 0.5, 0, 0.5}, PoolRatios{0, 0, 0.75, 0.25}}) {
        const double fast = zipmoe_evaluate(in, r).expected_makespan;
        const double literal = zipmoe_expected_makespan_literal(in, r);
        EXPECT_NEAR(fast, literal, 1e-12 * std::max(1.0, literal)) << budget << " " << k;
        ++cases;
      }
    }
  EXPECT_EQ(cases, 36);
}

TEST(ZipMoePlanning, ConditionalHitPatternsMatchConditionalPoissonSampling) {
  // The DP's P(h | sum = k) = Phi_M(k_rem) / Phi_N(k) prod Phi_p(h_p) against draws of exactly k experts
  // from the conditional-Poisson distribution with the IPF weights (traces/conditional_poisson.h).
  const uint32_t n = 12, k = 3;
  PlanningInput in = small_input(n, k, 2700, 11);  // F 1 (1000 B), C 1 (700 B), S 1, E 2; M ranks 6..12
  const PoolRatios ratios{1000.0 / 2700, 700.0 / 2700, 600.0 / 2700, 400.0 / 2700};
  const PoolPlan plan = zipmoe_evaluate(in, ratios);
  ASSERT_EQ(plan.ranks, (std::array<uint32_t, kPools>{1, 1, 1, 2}));
  const std::vector<double> q = zipmoe_selection_probabilities(in.f, k);
  const std::vector<double> phi_n = hit_distribution(q);
  std::array<std::vector<double>, kPools> phi;
  uint32_t u = 0;
  for (int p = 0; p < kPools; ++p) {
    phi[p] = hit_distribution(std::span<const double>(q).subspan(u, plan.ranks[p]));
    u += plan.ranks[p];
  }
  const std::vector<double> phi_m = hit_distribution(std::span<const double>(q).subspan(u));
  std::map<std::array<uint32_t, kPools>, double> dp;
  for (uint32_t a = 0; a < phi[0].size(); ++a)
    for (uint32_t b = 0; b < phi[1].size(); ++b)
      for (uint32_t c = 0; c < phi[2].size(); ++c)
        for (uint32_t e = 0; e < phi[3].size(); ++e) {
          if (a + b + c + e > k) continue;
          dp[{a, b, c, e}] =
              phi_m[k - (a + b + c + e)] / phi_n[k] * phi[0][a] * phi[1][b] * phi[2][c] * phi[3][e];
        }

  const traces::IpfResult fit = traces::fit_max_entropy(in.f, k);
  ASSERT_TRUE(fit.converged);
  const traces::CpSampler sampler(fit.units, k);
  Rng rng(20261123);
  const int draws = 200000;
  std::map<std::array<uint32_t, kPools>, double> mc;
  std::vector<uint32_t> s;
  double delay_sum = 0, delay_sq = 0;
  for (int i = 0; i < draws; ++i) {
    s.clear();
    sampler.draw(rng, s);
    std::array<uint32_t, kPools> h{};
    for (uint32_t rank : s) {  // ranks are 0-based: F {0}, C {1}, S {2}, E {3, 4}
      if (rank == 0)
        ++h[0];
      else if (rank == 1)
        ++h[1];
      else if (rank == 2)
        ++h[2];
      else if (rank <= 4)
        ++h[3];
    }
    mc[h] += 1.0 / draws;
    const double d = zipmoe_makespan_estimate(k, h, in.delays);
    delay_sum += d;
    delay_sq += d * d;
  }
  double total = 0;
  for (const auto& [h, p] : dp) {
    total += p;
    const double sigma = std::sqrt(p * (1 - p) / draws);
    EXPECT_NEAR(mc[h], p, 5 * sigma + 1e-6) << h[0] << h[1] << h[2] << h[3];
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
  for (const auto& [h, p] : mc) EXPECT_TRUE(dp.count(h)) << "sampled an impossible pattern";
  // The planner's expected makespan is the mean of Alg. 3 under that distribution.
  const double mean = delay_sum / draws, sd = std::sqrt(delay_sq / draws - mean * mean);
  EXPECT_NEAR(plan.expected_makespan, mean, 5 * sd / std::sqrt(draws));
}

TEST(ZipMoePlanning, GridSearchFindsTheBruteForceOptimumOverTheGrid) {
  for (const std::string pools : {"F,C,S,E", "F,S", "C,E", "F"}) {
    PlanningInput in = small_input(10, 2, 5000, 3);
    in.pools = PoolSet::parse(pools);
    in.grid = 0.1;
    const PlanResult r = zipmoe_plan(in);
    // Brute force: every gamma on the grid (all four coordinates, inactive ones 0), evaluated alone.
    double best = INFINITY;
    uint64_t points = 0;
    for (int a = 0; a <= 10; ++a)
      for (int b = 0; a + b <= 10; ++b)
        for (int c = 0; a + b + c <= 10; ++c) {
          const PoolRatios g{a / 10.0, b / 10.0, c / 10.0, (10 - a - b - c) / 10.0};
          bool ok = true;
          for (int p = 0; p < kPools; ++p) ok = ok && (g[p] == 0 || in.pools.active[p]);
          if (!ok) continue;
          ++points;
          best = std::min(best, zipmoe_evaluate(in, g).expected_makespan);
        }
    EXPECT_EQ(r.grid_points, points) << pools;
    EXPECT_NEAR(r.best.expected_makespan, best, 1e-12 * best) << pools;
    EXPECT_NEAR(zipmoe_evaluate(in, r.best.ratio).expected_makespan, r.best.expected_makespan, 1e-12 * best);
    for (const PoolPlan& p : r.runners_up) {
      EXPECT_GE(p.expected_makespan, r.best.expected_makespan);
      EXPECT_NE(p.experts, r.best.experts);
    }
    for (size_t i = 1; i < r.runners_up.size(); ++i)
      EXPECT_GE(r.runners_up[i].expected_makespan, r.runners_up[i - 1].expected_makespan);
    EXPECT_LE(r.best.used_bytes_per_layer(), in.budget_bytes);
  }
}

TEST(ZipMoePlanning, MoreMemoryNeverHurtsAndEnoughHoldsEverythingFull) {
  double prev = INFINITY;
  for (uint64_t budget : {500u, 2000u, 5000u, 10000u}) {
    PlanningInput in = small_input(10, 3, budget);
    const PlanResult r = zipmoe_plan(in);
    EXPECT_LE(r.best.expected_makespan, prev + 1e-12);
    prev = r.best.expected_makespan;
  }
  EXPECT_EQ(prev, 0.0);  // 10 experts x 1000 B all in F
}

// An estimator that records the ops it is asked about and costs them by bytes.
class RecordingEstimator final : public OpEstimator {
 public:
  mutable std::vector<Op> ops;
  double estimate(const Op& op) const override {
    ops.push_back(op);
    return (op.kind == OpKind::kDecompress ? 1e-9 : 1e-6) * static_cast<double>(op.bytes) +
           (op.part == TensorPart::kSm ? 1.0 : 0.0);
  }
};

TEST(ZipMoePlanning, DelaysComeFromRepresentativeOps) {
  RecordingEstimator est;
  TensorLayout l;
  l.shards = 4;
  l.sm_fraction = 0.5;
  l.e_ratio = 0.3;
  const PlanDelays d = zipmoe_plan_delays(est, 1000, l, 6, 3);
  ASSERT_EQ(est.ops.size(), 3u);
  EXPECT_EQ(est.ops[0].kind, OpKind::kSsdRead);
  EXPECT_EQ(est.ops[0].part, TensorPart::kSm);
  EXPECT_EQ(est.ops[0].bytes, 500u);
  EXPECT_EQ(est.ops[1].kind, OpKind::kSsdRead);
  EXPECT_EQ(est.ops[1].part, TensorPart::kE);
  EXPECT_EQ(est.ops[1].bytes, 38u);  // ceil(0.3 * 500 / 4)
  EXPECT_EQ(est.ops[2].kind, OpKind::kDecompress);
  EXPECT_EQ(est.ops[2].resource, ResourceClass::kCpu);
  EXPECT_EQ(est.ops[2].bytes, 125u);
  EXPECT_DOUBLE_EQ(d.u, 1.0 + 500e-6);
  EXPECT_DOUBLE_EQ(d.v, 38e-6);
  EXPECT_DOUBLE_EQ(d.c, 125e-9);
  EXPECT_EQ(d.L, 6u);
  EXPECT_EQ(d.K, 4u);
  EXPECT_EQ(d.n, 3u);
  EXPECT_THROW(zipmoe_plan_delays(est, 1000, l, 0, 3), Error);
}

TEST(ZipMoePlanning, RatiosAndPoolSetParsers) {
  const PoolRatios r = parse_pool_ratios("F=0.2,C=0.5,S=0.3");
  EXPECT_DOUBLE_EQ(r[0], 0.2);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 0.3);
  EXPECT_EQ(r[3], 0.0);
  EXPECT_EQ(pool_ratios_str(r), "F=0.2,C=0.5,S=0.3");
  EXPECT_EQ(parse_pool_ratios(" e = 1 ")[3], 1.0);
  auto msg = [](const char* text) { return error_of([&] { parse_pool_ratios(text); }); };
  EXPECT_NE(msg("F=0.2,C=0.5").find("must sum to 1 (they sum to 0.7)"), std::string::npos);
  EXPECT_NE(msg("F=0.5,X=0.5").find("unknown pool 'X'"), std::string::npos);
  EXPECT_NE(msg("F=0.5,F=0.5").find("named twice"), std::string::npos);
  EXPECT_NE(msg("F=abc,C=1").find("not a number: 'abc'"), std::string::npos);
  EXPECT_NE(msg("F=1.5,C=-0.5").find("must be in [0, 1]"), std::string::npos);
  EXPECT_NE(msg("F").find("not POOL=RATIO"), std::string::npos);
  EXPECT_NE(msg("").find("not POOL=RATIO"), std::string::npos);
  EXPECT_THROW(parse_pool_ratios("F=0.3,C=0.7000001"), UsageError);
  EXPECT_NO_THROW(parse_pool_ratios("F=0.3,C=0.7000000000001"));

  const PoolsOption set = parse_pools_option("F,C,S,E");
  EXPECT_FALSE(set.ratios);
  EXPECT_EQ(set.set.size(), 4);
  const PoolsOption fixed = parse_pools_option("F=0.2,S=0.8,E=0");
  ASSERT_TRUE(fixed.ratios);
  EXPECT_EQ(fixed.set.str(), "F,S,E");  // the pools it names, a zero ratio included
  EXPECT_DOUBLE_EQ((*fixed.ratios)[2], 0.8);
  EXPECT_THROW(parse_pools_option("F=0.2,C"), UsageError);

  EXPECT_EQ(PoolSet::parse("e,F").str(), "F,E");
  EXPECT_EQ(PoolSet::parse("F,C,S,E").size(), 4);
  EXPECT_NE(error_of([] { PoolSet::parse("F,Q"); }).find("unknown pool 'Q'"), std::string::npos);
  EXPECT_NE(error_of([] { PoolSet::parse("F,F"); }).find("named twice"), std::string::npos);
  EXPECT_THROW(PoolSet::parse(""), UsageError);
}

TEST(ZipMoePlanning, InvalidInputsAreClearErrors) {
  PlanningInput in = small_input(8, 2, 4000);
  in.grid = 0.3;
  EXPECT_NE(error_of([&] { zipmoe_plan(in); }).find("1 / step must be an integer"), std::string::npos);
  in = small_input(8, 2, 4000);
  in.f[0] += 0.1;
  EXPECT_NE(error_of([&] { zipmoe_plan(in); }).find("not k = 2"), std::string::npos);
  in = small_input(8, 2, 4000);
  in.pools = PoolSet::parse("F,C");
  EXPECT_NE(error_of([&] {
              zipmoe_evaluate(in, {0, 0, 0.5, 0.5});
            }).find("not in the active set F,C"),
            std::string::npos);
  in = small_input(8, 2, 4000);
  in.k = 8;
  EXPECT_NE(error_of([&] { zipmoe_plan(in); }).find("k: must be in [1, experts - 1]"), std::string::npos);
}

TEST(ZipMoePlanning, RegisteredAsAPlanningPolicy) {
  auto policy = PlanningRegistry::instance().create("zipmoe", "planning");
  PlanningInput in = small_input(10, 2, 5000);
  EXPECT_EQ(policy->plan(in).best.ratio, zipmoe_plan(in).best.ratio);
}

}  // namespace
}  // namespace moesim
