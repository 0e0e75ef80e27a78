// The baselines of Prism §IV-A (policies/placement/uniform.cpp, redundance.cpp, smartmoe.cpp): uniform's equal
// seeded split, redundance's seeded fill up to every GPU's memory, SmartMoE's load balance by hand.
#include <gtest/gtest.h>

#include <vector>

#include "core/placement.h"
#include "base/rng.h"
#include "tests/policies/placement_test_util.h"

namespace moesim {
namespace {

Placement place(const std::string& policy, const PlacementInput& in) {
  return PlacementRegistry::instance().create(policy, "placement")->place(in);
}

// How many experts of layer l each GPU (servers in order, their GPUs in order) holds.
std::vector<uint32_t> per_gpu(const PlacementInput& in, const Placement& p, uint32_t l) {
  std::vector<uint32_t> start, c(in.gpu_count(), 0);
  uint32_t at = 0;
  for (const auto& s : in.servers) {
    start.push_back(at);
    at += static_cast<uint32_t>(s.gpus.size());
  }
  for (uint32_t e = 0; e < in.experts; ++e)
    for (const Replica& r : p.replicas[l * in.experts + e]) ++c[start[r.server] + r.gpu];
  return c;
}

TEST(Uniform, EqualSeededSplitOneReplicaEach) {
  // 4 GPUs (a has two), 2 layers of 16 experts, memory to spare: 4 experts of each layer per GPU.
  PlacementInput in = test::instance({{10000, 10000}, {10000}, {10000}}, 2, 16, 100);
  const Placement p = place("uniform", in);
  for (uint32_t l = 0; l < 2; ++l) EXPECT_EQ(per_gpu(in, p, l), (std::vector<uint32_t>{4, 4, 4, 4}));
  for (const auto& rs : p.replicas) EXPECT_EQ(rs.size(), 1u);
  EXPECT_EQ(place("uniform", in).replicas, p.replicas);
  in.seed = 2;
  EXPECT_NE(place("uniform", in).replicas, p.replicas);  // 2 * 16! / (4!)^4 splits: a clash is negligible
}

TEST(Uniform, SmallGpuTakesWhatItHolds) {
  // GPUs of 2, 4 and 8 slots, 2 layers of 6 experts (12 to place): rounds of one slot per layer, each to the
  // GPU with the fewest of that layer: the 2-slot GPU takes 1 of each layer, the others split the rest 2|3.
  PlacementInput in = test::instance({{200}, {400}, {800}}, 2, 6, 100);
  const Placement p = place("uniform", in);
  EXPECT_EQ(placement_violation(in, p), "");
  for (uint32_t l = 0; l < 2; ++l) EXPECT_EQ(per_gpu(in, p, l), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(Redundance, FillsEveryGpuAndIsSeeded) {
  Rng rng(5);
  for (int i = 0; i < 200; ++i) {
    const PlacementInput in = test::random_instance(rng);
    const Placement p = place("redundance", in);
    EXPECT_EQ(placement_violation(in, p), "");
    EXPECT_EQ(place("redundance", in).replicas, p.replicas);
    // No GPU could take one more expert it does not hold (one expert size in these instances).
    for (uint32_t n = 0; n < in.servers.size(); ++n)
      for (uint32_t g = 0; g < in.servers[n].gpus.size(); ++g) {
        uint64_t used = 0;
        uint32_t held = 0;
        for (uint32_t k = 0; k < in.keys(); ++k)
          for (const Replica& r : p.replicas[k])
            if (r == Replica{n, g}) used += in.expert_bytes[k / in.experts], ++held;
        EXPECT_TRUE(held == in.keys() || in.servers[n].gpus[g].memory_bytes - used < in.expert_bytes[0])
            << "instance " << i;
      }
  }
}

TEST(SmartMoe, LongestLoadFirstToTheLeastLoadedGpu) {
  // One server, 2 GPUs with 2 slots of the layer each, w = (7, 5, 4, 2):
  //   e0 -> G0 (7); e1 -> G1 (5); e2 -> G1 (9); e3 -> G0 (9). One replica each.
  PlacementInput in = test::instance({{1000, 1000}}, 1, 4, 100);
  in.load[0] = {7, 5, 4, 2};
  EXPECT_EQ(place("smartmoe", in).replicas,
            (std::vector<std::vector<Replica>>{{{0, 0}}, {{0, 1}}, {{0, 1}}, {{0, 0}}}));
  // 6 experts, 3 slots each, w = (7, 5, 4, 2, 1, 1):
  //   speed 1 and 1: e0 -> G0 (7); e1 -> G1 (5); e2 -> G1 (9); e3 -> G0 (9); e4 -> G0 (10, tie); e5 -> G1 (G0 full).
  //   G1 three times as fast (load / speed): e0 -> G0 (7); e1 -> G1 (5/3); e2 -> G1 (9/3); e3 -> G1 (11/3, full);
  //   e4, e5 -> G0.
  in = test::instance({{1000, 1000}}, 1, 6, 100);
  in.load[0] = {7, 5, 4, 2, 1, 1};
  const Replica g0{0, 0}, g1{0, 1};
  EXPECT_EQ(place("smartmoe", in).replicas,
            (std::vector<std::vector<Replica>>{{g0}, {g1}, {g1}, {g0}, {g0}, {g1}}));
  in.servers[0].gpus[1].speed = 3;
  EXPECT_EQ(place("smartmoe", in).replicas,
            (std::vector<std::vector<Replica>>{{g0}, {g1}, {g1}, {g1}, {g0}, {g0}}));
}

}  // namespace
}  // namespace moesim
