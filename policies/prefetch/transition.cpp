// transition:train=PATH,top=n -- a learned cross-layer predictor: the experts a token used at layer l predict
// those it uses at layer l+1 (the co-activation that ProMoE-style and MoE-Infinity-style predictors exploit),
// counted from a training trace (policies/prefetch/training.h), never from the evaluated run.
//   train: C[l][i][j] = tokens of the training trace that picked i at layer l and j at layer l+1
//   propose(ctx, out): if the next invocation v of the step exists (layer l+1):
//       score[j] = sum over experts i of the current invocation of tokens(i) * C[l][i][j]
//       out += the n experts of layer l+1 with the highest score > 0 (ties: lower id), target v
//       (n = top, or with top=0 as many as the current invocation has experts)
// Uses only the current invocation's routing (known when the layer starts) and the training counts.
#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "core/prefetch.h"
#include "policies/prefetch/training.h"

namespace moesim::policies {
namespace {

class TransitionPrefetch final : public PrefetchPolicy {
 public:
  TransitionPrefetch(PrefetchTraining t, uint32_t top)
      : t_(std::move(t)), top_(top), score_(t_.experts), order_(t_.experts) {}

  void propose(const PrefetchContext& ctx, std::vector<PrefetchRequest>& out) override {
    const WorkloadView& w = *ctx.workload;
    const uint32_t next = ctx.invocation + 1;
    if (next >= w.step_begin[ctx.step + 1]) return;  // the last layer: the next token is not known yet
    const uint32_t l = ctx.layer, nl = w.lookups.inv_layer[next];
    if (nl != l + 1 || nl >= t_.layers) return;
    std::fill(score_.begin(), score_.end(), 0.0);
    const uint32_t b = w.lookups.inv_begin[ctx.invocation], e = w.lookups.inv_begin[ctx.invocation + 1];
    for (uint32_t k = b; k < e; ++k) {
      const uint32_t i = w.lookups.key[k] - l * w.experts;
      const double tokens = w.tokens.empty() ? 1.0 : static_cast<double>(w.tokens[k]);
      const uint32_t* row = &t_.transition[(size_t{l} * t_.experts + i) * t_.experts];
      for (uint32_t j = 0; j < t_.experts; ++j) score_[j] += tokens * row[j];
    }
    std::iota(order_.begin(), order_.end(), 0u);
    const uint32_t n = std::min<uint32_t>(top_ ? top_ : e - b, t_.experts);
    std::partial_sort(order_.begin(), order_.begin() + n, order_.end(), [&](uint32_t x, uint32_t y) {
      return score_[x] != score_[y] ? score_[x] > score_[y] : x < y;
    });
    for (uint32_t k = 0; k < n && score_[order_[k]] > 0; ++k)
      out.push_back(PrefetchRequest{static_cast<uint16_t>(nl), static_cast<uint16_t>(order_[k]), next});
  }

 private:
  PrefetchTraining t_;
  uint32_t top_;
  std::vector<double> score_;
  std::vector<uint32_t> order_;
};

}  // namespace

MOESIM_REGISTER(PrefetchRegistry, "transition",
                "learned cross-layer predictor: the current layer's experts predict the next layer's, from "
                "transition counts of a training trace",
                {{"train", "", "training trace (any format moesim reads; not the evaluated one)"},
                 {"top", "0", "experts proposed per invocation (0: as many as the current invocation has)",
                  ParamType::kWhole}},
                [](const Params& p, const PrefetchSetup& s) -> std::unique_ptr<PrefetchPolicy> {
                  const uint64_t top = p.get_uint("top");
                  if (top > s.experts)  // per-parameter types are the registry's; the run's model bounds top
                    throw UsageError("transition: top must be at most the experts per layer (" +
                                     std::to_string(s.experts) + "), got " + p.get("top"));
                  return std::make_unique<TransitionPrefetch>(
                      train_prefetch(p.get("train"), s.layers, s.experts), static_cast<uint32_t>(top));
                });

}  // namespace moesim::policies
