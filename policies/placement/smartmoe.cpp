// smartmoe: SmartMoE's placement module as the Prism paper uses it (Prism, §IV-A; SmartMoE: Efficiently
// Training Sparsely-Activated Models through Combining Offline and Online Parallelization, §4): a
// permutation of each layer's experts over the GPUs, one replica each and an equal count per GPU, chosen to
// balance the observed load. SmartMoE searches this space with a greedy heuristic on the load; this is the
// longest-processing-time greedy:
//
//   for each layer l:
//     slots_g(l) = E / G (as equal as memory allows, split_slots kEqual)
//     w(e) = sum over servers of f_n^l(e)                 (the load, wherever it comes from)
//     for e in experts by w descending (ties: lower index):
//       g = the GPU with a free slot of l and the least load_g / speed_g (ties: lower index)
//       place e on g;  load_g += w(e)
//
// Locality plays no part: SmartMoE balances GPUs, it does not know which server a request came from.
#include <algorithm>
#include <numeric>

#include "core/placement.h"
#include "policies/placement/placement_util.h"

namespace moesim::policies {
namespace {

class SmartMoe final : public PlacementPolicy {
 protected:
  Placement do_place(const PlacementInput& in) override {
    placement::GpuTable gpus(in);
    placement::split_slots(gpus, in, placement::SlotSplit::kEqual);
    const std::vector<double> w = placement::total_load(in);
    Placement p = placement::empty_placement(in);
    std::vector<uint32_t> order(in.experts);
    for (uint32_t l = 0; l < in.layers; ++l) {
      const uint32_t base = l * in.experts;
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return w[base + a] > w[base + b]; });
      std::vector<double> load(gpus.size(), 0);
      std::vector<uint32_t> left(gpus.size());
      for (uint32_t g = 0; g < gpus.size(); ++g) left[g] = gpus.count(g, l);
      for (uint32_t e : order) {
        uint32_t best = gpus.size();
        for (uint32_t g = 0; g < gpus.size(); ++g)
          if (left[g] > 0 && (best == gpus.size() || load[g] / gpus.speed(g) < load[best] / gpus.speed(best)))
            best = g;
        --left[best];
        load[best] += w[base + e];
        placement::add_replica(p, base + e, gpus.replica(best));
      }
    }
    return p;
  }
};

}  // namespace

MOESIM_REGISTER(PlacementRegistry, "smartmoe",
                "SmartMoE's placement (Prism §IV-A): each layer's experts once each, an equal count per GPU, "
                "assigned greedily (largest load first) to balance the observed load per GPU speed",
                {}, [](const Params&) -> std::unique_ptr<PlacementPolicy> { return std::make_unique<SmartMoe>(); });

}  // namespace moesim::policies
