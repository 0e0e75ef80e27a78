// popularity:train=PATH,top=n -- a learned static predictor: the n most used experts of each layer in a
// training trace (policies/prefetch/training.h).
//   train: F[l][e] = tokens of the training trace that picked e at layer l
//   propose(ctx, out): if the next invocation v of the step exists (layer l+1):
//       out += the n experts of layer l+1 with the highest F (ties: lower id), target v
// Knows nothing of the run: a baseline the routing-aware predictors must beat.
#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "core/prefetch.h"
#include "policies/prefetch/training.h"

namespace moesim::policies {
namespace {

class PopularityPrefetch final : public PrefetchPolicy {
 public:
  PopularityPrefetch(const PrefetchTraining& t, uint32_t top) : top_(top) {
    ranked_.resize(t.layers);
    for (uint32_t l = 0; l < t.layers; ++l) {
      auto& r = ranked_[l];
      r.resize(t.experts);
      std::iota(r.begin(), r.end(), uint16_t{0});
      const uint64_t* f = &t.freq[size_t{l} * t.experts];
      std::stable_sort(r.begin(), r.end(), [f](uint16_t x, uint16_t y) { return f[x] > f[y]; });
      r.resize(std::min<size_t>(top, r.size()));
    }
  }

  void propose(const PrefetchContext& ctx, std::vector<PrefetchRequest>& out) override {
    const WorkloadView& w = *ctx.workload;
    const uint32_t next = ctx.invocation + 1;
    if (next >= w.step_begin[ctx.step + 1]) return;
    const uint32_t nl = w.lookups.inv_layer[next];
    if (nl >= ranked_.size()) return;
    for (uint16_t e : ranked_[nl]) out.push_back(PrefetchRequest{static_cast<uint16_t>(nl), e, next});
  }

 private:
  uint32_t top_;
  std::vector<std::vector<uint16_t>> ranked_;
};

}  // namespace

MOESIM_REGISTER(PrefetchRegistry, "popularity",
                "learned static predictor: the `top` most used experts of the next layer in a training trace",
                {{"train", "", "training trace (any format moesim reads; not the evaluated one)"},
                 {"top", "8", "experts proposed per invocation (at most the experts per layer)",
                  ParamType::kWhole, ParamRange::at_least(1)}},
                [](const Params& p, const PrefetchSetup& s) -> std::unique_ptr<PrefetchPolicy> {
                  const uint64_t top = p.get_uint("top");
                  if (top > s.experts)  // the declared range says >= 1; the run's model says the most
                    throw UsageError("popularity: top must be at most the experts per layer (" +
                                     std::to_string(s.experts) + "), got " + p.get("top"));
                  return std::make_unique<PopularityPrefetch>(
                      train_prefetch(p.get("train"), s.layers, s.experts), static_cast<uint32_t>(top));
                });

}  // namespace moesim::policies
