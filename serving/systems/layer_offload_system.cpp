// layer-offload: Accelerate-style offloading. When a layer runs, all of its experts are loaded (those not
// resident); with `prefetch layer-window:depth=d` the next d layers load while it computes (DeepSpeed ZeRO-3
// style). The cache is offload's expert cache.
#include "serving/classic_residency.h"

namespace moesim::serving {
namespace {

class LayerOffload final : public System {
 public:
  std::unique_ptr<Residency> build(const SystemBuildContext& ctx, const PolicySpec& eviction,
                                   PipelineOptions& po, RunResult& r) const override {
    po.load_whole_layer = true;
    return make_run_expert_cache(ctx, eviction, r);
  }
};

}  // namespace

MOESIM_REGISTER(
    SystemRegistry, "layer-offload",
    "Accelerate-style: a layer's whole weights are loaded when it runs (the experts not resident), "
    "into offload's expert cache",
    {}, [](const Params&) -> std::unique_ptr<System> { return std::make_unique<LayerOffload>(); },
    PolicyNeeds{}, SystemTraits{.host_tier = true});

}  // namespace moesim::serving
