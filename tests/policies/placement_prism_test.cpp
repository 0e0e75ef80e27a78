// Prism's placement (policies/placement/prism.cpp; Prism, Accelerating Edge Inference for Distributed MoE
// Models with Latency-Optimized Expert Placement, §III-C): Alg. 1's coverage and memory on random instances
// and by hand; Alg. 2 by hand; Theorem 1's (1 - 1/e) bound against exact enumeration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "core/placement.h"
#include "base/rng.h"
#include "policies/placement/prism.h"
#include "tests/policies/placement_test_util.h"

namespace moesim {
namespace {

using placement::GpuTable;

TEST(PrismAlg1, EntropyInBits) {
  EXPECT_DOUBLE_EQ(placement::activation_entropy({1, 1, 1, 1}, 0, 4), 2);
  EXPECT_DOUBLE_EQ(placement::activation_entropy({0, 0, 0, 0, 3, 3, 0, 0}, 1, 4), 1);
  EXPECT_DOUBLE_EQ(placement::activation_entropy({5, 0, 0, 0}, 0, 4), 0);
  EXPECT_DOUBLE_EQ(placement::activation_entropy({0, 0, 0, 0}, 0, 4), 0);
}

TEST(PrismAlg1, CoverageAndMemoryOnRandomInstances) {
  Rng rng(1);
  for (int i = 0; i < 2000; ++i) {
    const PlacementInput in = test::random_instance(rng, i % 4 == 3);
    GpuTable gpus(in);
    const auto cnt = placement::prism_counts(in, gpus);
    for (uint32_t l = 0; l < in.layers; ++l) {
      uint32_t total = 0;
      for (uint32_t n = 0; n < in.servers.size(); ++n) {
        EXPECT_LE(cnt[n][l], in.experts);
        total += cnt[n][l];
        uint32_t on_gpus = 0;
        for (uint32_t g : gpus.of_server(n)) on_gpus += gpus.count(g, l);
        EXPECT_EQ(on_gpus, cnt[n][l]);
      }
      EXPECT_GE(total, in.experts) << "instance " << i << " layer " << l << ": coverage";
    }
    for (uint32_t n = 0; n < in.servers.size(); ++n)
      for (uint32_t j = 0; j < in.servers[n].gpus.size(); ++j) {
        uint64_t used = 0;
        const uint32_t g = gpus.of_server(n)[j];
        for (uint32_t l = 0; l < in.layers; ++l) used += gpus.count(g, l) * in.expert_bytes[l];
        EXPECT_LE(used, in.servers[n].gpus[j].memory_bytes) << "instance " << i << ": memory";
      }
  }
}

TEST(PrismAlg1, ByHand) {
  // Servers a and b, one GPU of 4 experts each, 2 layers of 4 experts: 8 slots for 8 experts.
  //   a: layer 0 (1,1,1,1) -> v = 2 bits; layer 1 (1,1,0,0) -> v = 1.  Shares 4*2/3 = 2.67, 4/3 = 1.33:
  //      floors (2, 1), the leftover slot to layer 0 (remainder .67 > .33): (3, 1).
  //   b: layer 0 (1,0,0,0) -> v = 0; layer 1 (1,1,1,1) -> v = 2: shares (0, 4): (0, 4).
  //   Totals (3, 5). Step 2, layer 0: a first (equal memory, lower index), l' = 1 (5 > 4), a gives a layer-1
  //   count to layer 0: a (4, 0), b (0, 4), totals (4, 4).
  PlacementInput in = test::instance({{400}, {400}}, 2, 4, 100);
  in.load[0] = {1, 1, 1, 1, 1, 1, 0, 0};
  in.load[1] = {1, 0, 0, 0, 1, 1, 1, 1};
  GpuTable gpus(in);
  EXPECT_EQ(placement::prism_counts(in, gpus), (std::vector<std::vector<uint32_t>>{{4, 0}, {0, 4}}));
  // Alg. 2 has nothing to repair: a holds layer 0, b layer 1; Eq. 2 = a's layer-1 load + b's layer-0 load.
  const Placement p = PlacementRegistry::instance().create("prism", "placement")->place(in);
  EXPECT_DOUBLE_EQ(proxy_cost(p, in.load), 2 + 1);
}

TEST(PrismAlg2, CoverageLoopByHand) {
  // One layer of 3 experts, servers a and b with 2 slots each. f_a = (5, 3, 1), f_b = (4, 1, 0).
  // Line 3: A_a = {0, 1}, A_b = {0, 1}; U = {2}. Both hold 2 duplicates; b's least-used one costs it 1, a's 3:
  // b goes first, its most frequent unassigned expert is 2 (the only one), it drops expert 1: A_b = {0, 2}.
  // Eq. 2: a misses expert 2 (1), b misses expert 1 (1): 2. (Servers in index order, as the pseudocode's tie
  // falls, a would drop expert 1 instead: 3 + 0 = 3.)
  PlacementInput in = test::instance({{200}, {200}}, 1, 3, 100);
  in.load[0] = {5, 3, 1};
  in.load[1] = {4, 1, 0};
  const Placement p = PlacementRegistry::instance().create("prism", "placement")->place(in);
  EXPECT_EQ(p.replicas, (std::vector<std::vector<Replica>>{{{0, 0}, {1, 0}}, {{0, 0}}, {{1, 0}}}));
  EXPECT_DOUBLE_EQ(proxy_cost(p, in.load), 2);
}

// U_n(S) = sum over the experts e of S of f_n^l(e): Theorem 1's local utility (modular, hence submodular).
double utility(const PlacementInput& in, uint32_t n, const std::vector<bool>& held) {
  double u = 0;
  for (uint32_t k = 0; k < in.keys(); ++k)
    if (held[k]) u += in.load[n][k];
  return u;
}

// Every subset of {0..E-1} of size k, as bit masks.
std::vector<uint32_t> subsets(uint32_t E, uint32_t k) {
  std::vector<uint32_t> out;
  for (uint32_t m = 0; m < (1u << E); ++m)
    if (static_cast<uint32_t>(__builtin_popcount(m)) == k) out.push_back(m);
  return out;
}

TEST(PrismTheorem1, GreedyWithinOneMinusOneOverEOfTheOptimum) {
  // Small instances (E <= 6, up to 3 servers): Alg. 1's counts N_{n,l}, then
  //  (a) Theorem 1 per server: U_n of line 3's top-N_{n,l} sets against the best S with |S cap E_l| = N_{n,l}
  //      for every l (B_n = sum_l N_{n,l} split as Alg. 1 splits it), enumerated;
  //  (b) Alg. 2's result with its coverage loop: sum_n U_n against the best covering assignment with the same
  //      counts (every expert on some server), enumerated per layer over every server's subset: at most that
  //      optimum; the ratio is recorded (below (1 - 1/e) on some instances: the printed loop swaps by
  //      duplicate count, not by loss).
  const double bound = 1 - 1 / std::exp(1.0);
  Rng rng(2024);
  int checked = 0, below = 0;
  double worst = 1;
  for (int i = 0; i < 600; ++i) {
    PlacementInput in = test::random_instance(rng);
    if (in.experts > 6 || in.servers.size() > 3) continue;
    ++checked;
    GpuTable gpus(in);
    const auto cnt = placement::prism_counts(in, gpus);
    const uint32_t N = static_cast<uint32_t>(in.servers.size()), E = in.experts;
    const auto top = placement::prism_assign(in, cnt, false);
    for (uint32_t n = 0; n < N; ++n) {
      double best = 0;
      for (uint32_t l = 0; l < in.layers; ++l) {
        double layer_best = 0;
        for (uint32_t m : subsets(E, cnt[n][l])) {
          double u = 0;
          for (uint32_t e = 0; e < E; ++e)
            if (m >> e & 1) u += in.load[n][l * E + e];
          layer_best = std::max(layer_best, u);
        }
        best += layer_best;
      }
      EXPECT_GE(utility(in, n, top[n]), bound * best - 1e-9) << "instance " << i << " server " << n;
    }
    const auto held = placement::prism_assign(in, cnt, true);
    double got = 0, opt = 0;
    for (uint32_t n = 0; n < N; ++n) got += utility(in, n, held[n]);
    for (uint32_t l = 0; l < in.layers; ++l) {
      std::vector<std::vector<uint32_t>> choice(N);
      for (uint32_t n = 0; n < N; ++n) choice[n] = subsets(E, cnt[n][l]);
      double layer_opt = -1;
      std::function<void(uint32_t, uint32_t, double)> walk = [&](uint32_t n, uint32_t cover, double u) {
        if (n == N) {
          if (cover == (1u << E) - 1) layer_opt = std::max(layer_opt, u);
          return;
        }
        for (uint32_t m : choice[n]) {
          double add = 0;
          for (uint32_t e = 0; e < E; ++e)
            if (m >> e & 1) add += in.load[n][l * E + e];
          walk(n + 1, cover | m, u + add);
        }
      };
      walk(0, 0, 0);
      ASSERT_GE(layer_opt, 0) << "instance " << i << " layer " << l << ": Alg. 1's counts cannot cover";
      opt += layer_opt;
    }
    // The coverage loop's swaps are not chosen for their loss, so the bound is not guaranteed after it
    // (docs/placement.md, Theorem 1): only that the result is one of the covering assignments.
    EXPECT_LE(got, opt + 1e-9) << "instance " << i;
    if (opt > 0) worst = std::min(worst, got / opt);
    below += got < bound * opt - 1e-9;
  }
  EXPECT_GT(checked, 150);
  RecordProperty("worst_ratio_after_coverage", std::to_string(worst));
  RecordProperty("below_bound_after_coverage", below);
  RecordProperty("instances", checked);
}

}  // namespace
}  // namespace moesim
