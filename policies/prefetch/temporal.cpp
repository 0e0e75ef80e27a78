// temporal -- the previous token's experts: when layer l starts, propose the experts that the most recent
// earlier invocation of layer l+1 (the previous step's) used. Needs no training; exploits the temporal
// locality of routing (consecutive tokens reuse experts).
//   propose(ctx, out): last[l] = ctx.invocation
//     if the next invocation v of the step exists (layer l+1) and last[l+1] is set (an earlier step's):
//       out += every expert of invocation last[l+1], target v
// Reads only invocations that already ran.
#include "core/prefetch.h"

namespace moesim::policies {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

class TemporalPrefetch final : public PrefetchPolicy {
 public:
  explicit TemporalPrefetch(const PrefetchSetup& s) : last_(s.layers, kNone) {}

  void propose(const PrefetchContext& ctx, std::vector<PrefetchRequest>& out) override {
    const WorkloadView& w = *ctx.workload;
    if (ctx.layer < last_.size()) last_[ctx.layer] = ctx.invocation;
    const uint32_t next = ctx.invocation + 1;
    if (next >= w.step_begin[ctx.step + 1]) return;
    const uint32_t nl = w.lookups.inv_layer[next];
    if (nl >= last_.size() || last_[nl] == kNone) return;
    const uint32_t prev = last_[nl];
    for (uint32_t k = w.lookups.inv_begin[prev]; k < w.lookups.inv_begin[prev + 1]; ++k)
      out.push_back(PrefetchRequest{static_cast<uint16_t>(nl), static_cast<uint16_t>(w.lookups.key[k] - nl * w.experts), next});
  }

 private:
  std::vector<uint32_t> last_;
};

}  // namespace

MOESIM_REGISTER(PrefetchRegistry, "temporal",
                "the previous token's experts at the next layer (temporal locality; no training)", {},
                [](const Params&, const PrefetchSetup& s) -> std::unique_ptr<PrefetchPolicy> {
                  return std::make_unique<TemporalPrefetch>(s);
                });

}  // namespace moesim::policies
