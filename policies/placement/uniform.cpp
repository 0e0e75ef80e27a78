// uniform: Megatron-LM's expert parallelism as the Prism paper's "Uniform" baseline (Prism, §IV-A): every
// layer's experts split equally and at random over all GPUs, one replica each.
//
//   for each layer l:
//     slots_g(l) = E / G, the remainder one each to the first GPUs    (as equal as each GPU's memory allows,
//                                                                      split_slots kEqual)
//     perm = a seeded random permutation of the experts of l
//     deal perm over the GPUs' slots of l in GPU order
//
// Megatron-LM fails on a GPU that cannot hold its share; here a small GPU takes what it can hold and the
// others take the rest, so a heterogeneous cluster still gets one copy of every expert.
#include <numeric>

#include "core/placement.h"
#include "base/rng.h"
#include "policies/placement/placement_util.h"

namespace moesim::policies {
namespace {

class Uniform final : public PlacementPolicy {
 protected:
  Placement do_place(const PlacementInput& in) override {
    placement::GpuTable gpus(in);
    placement::split_slots(gpus, in, placement::SlotSplit::kEqual);
    Placement p = placement::empty_placement(in);
    Rng rng(in.seed);
    std::vector<uint32_t> perm(in.experts);
    for (uint32_t l = 0; l < in.layers; ++l) {
      std::iota(perm.begin(), perm.end(), 0u);
      for (uint32_t i = in.experts; i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
      uint32_t next = 0;
      for (uint32_t g = 0; g < gpus.size(); ++g)
        for (uint32_t k = 0; k < gpus.count(g, l); ++k)
          placement::add_replica(p, l * in.experts + perm[next++], gpus.replica(g));
    }
    return p;
  }
};

}  // namespace

MOESIM_REGISTER(PlacementRegistry, "uniform",
                "Megatron-LM expert parallelism (Prism §IV-A Uniform): each layer's experts split equally at random "
                "over all GPUs, one replica each; seeded by the run's seed",
                {}, [](const Params&) -> std::unique_ptr<PlacementPolicy> { return std::make_unique<Uniform>(); });

}  // namespace moesim::policies
