// Every registered placement (core/placement.h) on random instances: coverage, memory, distinct replicas,
// same seed -> same placement; the uncoverable case's error names the layer and the memory missing; input
// errors; Eq. 2 by hand.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "core/placement.h"
#include "base/rng.h"
#include "tests/error_of.h"
#include "tests/policies/placement_test_util.h"

namespace moesim {
namespace {

Placement place(const std::string& policy, const PlacementInput& in) {
  return PlacementRegistry::instance().create(policy, "placement")->place(in);
}

TEST(PlacementRegistry, ListsThePaperPolicies) {
  EXPECT_EQ(PlacementRegistry::instance().names(), "eplb, prism, redundance, smartmoe, uniform");
}

TEST(PlacementContract, EveryPolicyCoversWithinMemoryOnRandomInstances) {
  Rng rng(29);
  for (int i = 0; i < 400; ++i) {
    const PlacementInput in = test::random_instance(rng);
    for (const auto& e : PlacementRegistry::instance().entries()) {
      const Placement p = place(e.name, in);
      EXPECT_EQ(placement_violation(in, p), "") << e.name << " instance " << i;
      EXPECT_EQ(place(e.name, in).replicas, p.replicas) << e.name << ": same seed, different placement";
      // Eq. 2 lies between 0 (everything local) and the whole load.
      double all = 0;
      for (const auto& f : in.load)
        for (double x : f) all += x;
      const double c = proxy_cost(p, in.load);
      EXPECT_GE(c, 0);
      EXPECT_LE(c, all);
    }
  }
}

TEST(PlacementContract, MixedExpertSizesWithRoomToSpare) {
  Rng rng(7);
  for (int i = 0; i < 200; ++i) {
    const PlacementInput in = test::random_instance(rng, true);
    for (const auto& e : PlacementRegistry::instance().entries())
      EXPECT_EQ(placement_violation(in, place(e.name, in)), "") << e.name << " instance " << i;
  }
}

TEST(PlacementContract, ValidatorCatchesEachBrokenInvariant) {
  PlacementInput in = test::instance({{200}, {100}}, 1, 2, 100);
  Placement p;
  p.layers = 1;
  p.experts = 2;
  p.replicas = {{{0, 0}}, {{0, 0}, {1, 0}}};
  EXPECT_EQ(placement_violation(in, p), "");
  p.replicas[0].clear();
  EXPECT_EQ(placement_violation(in, p), "layer 0 expert 0 has no replica (coverage)");
  p.replicas[0] = {{1, 0}};
  EXPECT_EQ(placement_violation(in, p), "server 'b' GPU 0: 200 B of experts in 100 B (memory)");
  p.replicas[0] = {{0, 0}, {0, 0}};
  EXPECT_EQ(placement_violation(in, p), "layer 0 expert 0: replicas not sorted or twice on one GPU");
  p.replicas[0] = {{0, 1}};
  EXPECT_EQ(placement_violation(in, p), "layer 0 expert 0: a replica on a GPU that does not exist");
}

TEST(PlacementContract, UncoverableNamesTheLayerAndTheMemoryMissing) {
  // 1 MiB experts; GPUs of 5 and 4.5 MiB hold 5 + 4 = 9 of the 12 experts of 3 layers x 4. Layers in order,
  // each expert on the GPU with the most free memory: layers 0 and 1 fit (free 1 and 0.5 MiB left), layer 2
  // places one expert (free 0 and 0.5) and 3 get none: 3 x 1 MiB missing.
  const uint64_t MiB = 1 << 20;
  const PlacementInput in = test::instance({{5 * MiB}, {9 * MiB / 2}}, 3, 4, MiB);
  const std::string want =
      "placement: layer 2: 3 experts of 1.00 MiB need 3.00 MiB more than the 2 servers' free memory (2 GPUs, "
      "9.50 MiB for experts in all); every expert needs at least one replica";
  EXPECT_EQ(test::error_of([&] { check_coverable(in); }), want);
  for (const auto& e : PlacementRegistry::instance().entries())
    EXPECT_EQ(test::error_of([&] { place(e.name, in); }), want) << e.name;
  // One layer more: layer 3's 4 experts are missing too.
  const PlacementInput in4 = test::instance({{5 * MiB}, {9 * MiB / 2}}, 4, 4, MiB);
  EXPECT_EQ(test::error_of([&] { check_coverable(in4); }),
            "placement: layer 2: 3 experts of 1.00 MiB, and layer 3 (4 experts), need 7.00 MiB more than the 2 "
            "servers' free memory (2 GPUs, 9.50 MiB for experts in all); every expert needs at least one replica");
  // Half a MiB more on the second GPU covers everything, with no room to spare.
  EXPECT_NO_THROW(check_coverable(test::instance({{5 * MiB}, {7 * MiB}}, 3, 4, MiB)));
}

TEST(PlacementContract, BadInputNamesTheField) {
  PlacementInput in = test::instance({{400}, {400}}, 2, 2, 100);
  in.load[1].pop_back();
  EXPECT_EQ(test::error_of([&] { validate_placement_input(in); }),
            "placement input: server 'b': load has 3 entries, expected 4 (layers x experts)");
  in = test::instance({{400}, {400}}, 2, 2, 100);
  in.load[0][1] = -1;
  EXPECT_EQ(test::error_of([&] { place("prism", in); }), "placement input: server 'a': a load is negative or not finite");
  in = test::instance({{400}, {}}, 2, 2, 100);
  EXPECT_EQ(test::error_of([&] { place("uniform", in); }), "placement input: server 'b': no GPUs");
  in = test::instance({{400}}, 2, 2, 100);
  in.expert_bytes[1] = 0;
  EXPECT_EQ(test::error_of([&] { place("eplb", in); }), "placement input: expert_bytes[1] is 0");
  EXPECT_THROW(PlacementRegistry::instance().create("eplb:groups=0", "placement"), UsageError);
  EXPECT_THROW(PlacementRegistry::instance().create("prism:k=1", "placement"), Error);
}

TEST(PlacementProxyCost, Eq2ByHand) {
  // 2 servers, 1 layer of 3 experts. Server a holds {0}, server b holds {1, 2}.
  // f_a = (5, 2, 1): remote 2 + 1 = 3;  f_b = (4, 0, 7): remote 4.  C = 7.
  Placement p;
  p.layers = 1;
  p.experts = 3;
  p.replicas = {{{0, 0}}, {{1, 0}}, {{1, 0}}};
  EXPECT_DOUBLE_EQ(proxy_cost(p, {{5, 2, 1}, {4, 0, 7}}), 7);
  p.replicas[0].push_back({1, 0});  // expert 0 on b as well: b's 4 become local
  EXPECT_DOUBLE_EQ(proxy_cost(p, {{5, 2, 1}, {4, 0, 7}}), 3);
}

}  // namespace
}  // namespace moesim
