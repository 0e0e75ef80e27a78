// layer-window:depth=d -- whole-layer prefetching (DeepSpeed ZeRO-3-style): when layer l starts, every
// expert of layers l+1 .. l+d (wrapping to layer 0 of the next step: this needs no prediction, the model's
// layer order is fixed).
//   propose(ctx, out): for j in 1..d: for e in experts: out += ((l + j) mod layers, e)
#include "base/error.h"
#include "core/prefetch.h"

namespace moesim::policies {
namespace {

class LayerWindow final : public PrefetchPolicy {
 public:
  LayerWindow(uint32_t depth, const PrefetchSetup& s)
      : depth_(depth), layers_(s.layers), experts_(s.experts) {}
  void propose(const PrefetchContext& ctx, std::vector<PrefetchRequest>& out) override {
    for (uint32_t j = 1; j <= depth_ && j < layers_; ++j) {
      const auto layer = static_cast<uint16_t>((ctx.layer + j) % layers_);
      for (uint32_t e = 0; e < experts_; ++e) out.push_back(PrefetchRequest{layer, static_cast<uint16_t>(e)});
    }
  }

 private:
  uint32_t depth_, layers_, experts_;
};

}  // namespace

MOESIM_REGISTER(PrefetchRegistry, "layer-window", "every expert of the next `depth` layers (DeepSpeed-style)",
                {{"depth", "1", "layers ahead", ParamType::kWhole, ParamRange::closed(1, 4096)}},
                [](const Params& p, const PrefetchSetup& s) -> std::unique_ptr<PrefetchPolicy> {
                  const uint64_t d = p.get_uint("depth");
                  return std::make_unique<LayerWindow>(static_cast<uint32_t>(d), s);
                });

}  // namespace moesim::policies
