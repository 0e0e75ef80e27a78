// offload: expert-level on-demand offloading. Experts live whole on the SSD; an expert cache of `budget`
// bytes (or experts per layer) managed by the eviction policy holds the experts read so far; a missed expert
// is read whole, made visible to the GPU and computed (llama.cpp-style offloading; an activation-aware cache
// such as MoE-Infinity's would be an eviction policy of its own). On a discrete GPU the cache is in device
// memory; a host budget adds a DRAM tier behind it (a VRAM miss that hits in DRAM costs a host-to-device
// copy, not an SSD read).
#include "serving/classic_residency.h"

namespace moesim::serving {
namespace {

class Offload final : public System {
 public:
  std::unique_ptr<Residency> build(const SystemBuildContext& ctx, const PolicySpec& eviction,
                                   PipelineOptions&, RunResult& r) const override {
    return make_run_expert_cache(ctx, eviction, r);
  }
};

}  // namespace

MOESIM_REGISTER(
    SystemRegistry, "offload",
    "expert-level on-demand offloading: an expert cache (--budget, --scope, --policy) in front of "
    "the SSD, optionally a host-memory tier behind it (--host-budget)",
    {}, [](const Params&) -> std::unique_ptr<System> { return std::make_unique<Offload>(); }, PolicyNeeds{},
    SystemTraits{.host_tier = true});

}  // namespace moesim::serving
