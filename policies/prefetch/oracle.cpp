// oracle:accuracy=p,lookahead=n -- the shape of a learned next-layer predictor of accuracy p (ProMoE,
// next-layer gate predictors): when an invocation starts, the true experts of the next n invocations of the
// same step, each kept with probability p and otherwise replaced by an expert of that layer the invocation
// did not pick (uniformly among those not picked and not yet proposed).
//   propose(ctx, out):
//     for i in ctx.invocation+1 .. ctx.invocation+n, while i is in ctx's step:
//       truth = unique experts of invocation i
//       for e in truth:
//         if uniform() < p: out += (layer(i), e, target i)
//         else:             out += (layer(i), random expert not in truth and not proposed, target i)
// It does not look across steps: the next token's first layer depends on a token not yet sampled, which
// no layer-ahead predictor can see either. Seeded from the run's seed: the same seed, the same proposals.
#include <algorithm>

#include "base/error.h"
#include "base/rng.h"
#include "core/prefetch.h"

namespace moesim::policies {
namespace {

class OraclePrefetch final : public PrefetchPolicy {
 public:
  OraclePrefetch(double accuracy, uint32_t lookahead, const PrefetchSetup& s)
      : accuracy_(accuracy),
        lookahead_(lookahead),
        rng_(s.seed ^ 0x9e3779b97f4a7c15ull),
        mark_(s.experts, 0) {}

  void propose(const PrefetchContext& ctx, std::vector<PrefetchRequest>& out) override {
    const WorkloadView& w = *ctx.workload;
    const uint32_t step_end = w.step_begin[ctx.step + 1];
    for (uint32_t i = ctx.invocation + 1; i <= ctx.invocation + lookahead_ && i < step_end; ++i) {
      const uint32_t layer = w.lookups.inv_layer[i];
      const uint32_t b = w.lookups.inv_begin[i], e = w.lookups.inv_begin[i + 1];
      // mark_: 1 = picked by the invocation, 2 = proposed already.
      for (uint32_t j = b; j < e; ++j) mark_[w.lookups.key[j] - layer * w.experts] = 1;
      const uint32_t free = w.experts - (e - b);
      uint32_t used_free = 0;
      for (uint32_t j = b; j < e; ++j) {
        const auto truth = static_cast<uint16_t>(w.lookups.key[j] - layer * w.experts);
        uint16_t pick = truth;
        if (rng_.uniform() >= accuracy_) {
          if (used_free == free) continue;  // every other expert is proposed already: propose nothing
          // The r-th expert that is neither picked nor proposed.
          auto r = static_cast<uint32_t>(rng_.below(free - used_free));
          for (uint16_t x = 0;; ++x)
            if (mark_[x] == 0 && r-- == 0) {
              pick = x;
              break;
            }
          mark_[pick] = 2;
          ++used_free;
        }
        out.push_back(PrefetchRequest{static_cast<uint16_t>(layer), pick, i});
      }
      for (uint32_t x = 0; x < w.experts; ++x) mark_[x] = 0;
    }
  }

 private:
  double accuracy_;
  uint32_t lookahead_;
  Rng rng_;
  std::vector<uint8_t> mark_;
};

}  // namespace

MOESIM_REGISTER(
    PrefetchRegistry, "oracle",
    "the trace's true next-layer experts, each kept with probability `accuracy` and otherwise "
    "replaced by an expert the invocation did not pick (a predictor of that accuracy)",
    {{"accuracy", "1", "probability each true expert is proposed", ParamType::kReal,
      ParamRange::closed(0, 1)},
     {"lookahead", "1", "invocations ahead, within the step", ParamType::kWhole,
      ParamRange::closed(1, 1024)}},
    [](const Params& p, const PrefetchSetup& s) -> std::unique_ptr<PrefetchPolicy> {
      const double a = p.get_double("accuracy");
      const uint64_t n = p.get_uint("lookahead");
      return std::make_unique<OraclePrefetch>(a, static_cast<uint32_t>(n), s);
    },
    PolicyNeeds{.next_use = true});

}  // namespace moesim::policies
