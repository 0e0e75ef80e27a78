// EPLB (policies/placement/eplb.cpp; DeepSeek's Expert Parallelism Load Balancer, heterogeneous as Prism
// §IV-A re-implements it) on cases worked by hand.
#include <gtest/gtest.h>

#include <vector>

#include "core/placement.h"
#include "tests/policies/placement_test_util.h"

namespace moesim {
namespace {

using Replicas = std::vector<std::vector<Replica>>;

Placement eplb(const std::string& spec, const PlacementInput& in) {
  return PlacementRegistry::instance().create(spec, "placement")->place(in);
}

TEST(Eplb, GlobalReplicatesTheHighestLoadPerReplicaAndPacksBalanced) {
  // One server with 2 GPUs of 3 slots, one layer of 4 experts, load w = (10, 6, 3, 1): 6 slots, 2 extra replicas.
  //   replicate: w/count = (10, 6, 3, 1) -> expert 0 gets a second (5 each); (5, 6, 3, 1) -> expert 1 (3 each).
  //   items by load per replica: e0 5, e0 5, e1 3, e1 3, e2 3, e3 1.
  //   pack (least load among GPUs with a free slot and without the expert; ties lower GPU):
  //     e0 -> G0 (5); e0 -> G1 (5); e1 -> G0 (8); e1 -> G1 (8); e2 -> G0 (11); e3 -> G1 (9, G0 full).
  PlacementInput in = test::instance({{300, 300}}, 1, 4, 100);
  in.load[0] = {10, 6, 3, 1};
  EXPECT_EQ(eplb("eplb", in).replicas, (Replicas{{{0, 0}, {0, 1}}, {{0, 0}, {0, 1}}, {{0, 0}}, {{0, 1}}}));
}

TEST(Eplb, HeterogeneousSlotsFollowMemory) {
  // GPUs of 3 and 1 slots (one layer of 4 experts), w = (8, 4, 2, 2), loads summed over the two servers.
  //   4 slots, no extra replica; items 8, 4, 2, 2: e0 -> G0 (8); e1 -> G1 (4; G1 now full);
  //   e2 -> G0 (10); e3 -> G0 (12).
  PlacementInput in = test::instance({{300}, {100}}, 1, 4, 100);
  in.load[0] = {8, 0, 2, 0};
  in.load[1] = {0, 4, 0, 2};
  EXPECT_EQ(eplb("eplb", in).replicas, (Replicas{{{0, 0}}, {{1, 0}}, {{0, 0}}, {{0, 0}}}));
}

TEST(Eplb, HierarchicalWhenTheServersDivideTheGroups) {
  // Two servers with one GPU of 3 slots, one layer of 4 experts in 2 groups {0,1}, {2,3}; w = (10, 6, 3, 1).
  //   groups=2, 2 % 2 == 0: hierarchical. Group loads 16, 4; quotas 1 group per server (3 slots each).
  //   Group {0,1} -> server a (ties: lower), {2,3} -> server b. Within a server one GPU: no second replica
  //   (it would share the GPU), one slot left free on each.
  PlacementInput in = test::instance({{300}, {300}}, 1, 4, 100);
  in.load[0] = {10, 6, 0, 0};
  in.load[1] = {0, 0, 3, 1};
  EXPECT_EQ(eplb("eplb:groups=2", in).replicas, (Replicas{{{0, 0}}, {{0, 0}}, {{1, 0}}, {{1, 0}}}));
  // groups=1: 1 % 2 != 0, global over both GPUs: as in the first case with G0 = a's GPU, G1 = b's.
  EXPECT_EQ(eplb("eplb", in).replicas, (Replicas{{{0, 0}, {1, 0}}, {{0, 0}, {1, 0}}, {{0, 0}}, {{1, 0}}}));
}

}  // namespace
}  // namespace moesim
