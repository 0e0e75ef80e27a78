// redundance: the Prism paper's "Redundance" baseline (Prism, §IV-A): "enables expert duplication across
// servers by randomly distributing experts up to each device's capacity".
//
//   place one replica of every expert as uniform does (an equal seeded random split)
//   for each GPU g (in order):
//     cand = every (layer, expert) that g does not hold, in a seeded random order
//     for key in cand: if key's expert fits g's free memory: g also holds key
//
// The first pass keeps coverage; the second fills each GPU's memory with random duplicates.
#include <numeric>

#include "core/placement.h"
#include "base/rng.h"
#include "policies/placement/placement_util.h"

namespace moesim::policies {
namespace {

class Redundance final : public PlacementPolicy {
 protected:
  Placement do_place(const PlacementInput& in) override {
    Placement p = PlacementRegistry::instance().create("uniform", "placement")->place(in);
    placement::GpuTable gpus(in);
    std::vector<std::vector<bool>> held(gpus.size(), std::vector<bool>(in.keys(), false));
    for (uint32_t key = 0; key < in.keys(); ++key)
      for (const Replica& r : p.replicas[key]) {
        const uint32_t g = gpus.of_server(r.server)[r.gpu];
        gpus.take(g, key / in.experts);
        held[g][key] = true;
      }
    const Rng base(in.seed ^ 0x5eed0fd0b1e5ull);  // not the stream uniform drew its split from
    std::vector<uint32_t> cand(in.keys());
    for (uint32_t g = 0; g < gpus.size(); ++g) {
      Rng rng = base.split(g);
      std::iota(cand.begin(), cand.end(), 0u);
      for (uint32_t i = in.keys(); i > 1; --i) std::swap(cand[i - 1], cand[rng.below(i)]);
      for (uint32_t key : cand) {
        if (held[g][key] || !gpus.fits(g, key / in.experts)) continue;
        gpus.take(g, key / in.experts);
        held[g][key] = true;
        placement::add_replica(p, key, gpus.replica(g));
      }
    }
    return p;
  }
};

}  // namespace

MOESIM_REGISTER(PlacementRegistry, "redundance",
                "Prism §IV-A Redundance: uniform's random split, then every GPU filled with random duplicates up "
                "to its memory; seeded by the run's seed",
                {},
                [](const Params&) -> std::unique_ptr<PlacementPolicy> { return std::make_unique<Redundance>(); });

}  // namespace moesim::policies
