// cumsum (p, J): Cumulative-Probability-Threshold routing, Mixture of Cache-Conditional Experts, §3.2,
// Alg. 2 (Eq. 8), then Max-Rank (Eq. 7) with that M.
//   for each token: P = softmax(router logits)
//     M = min i such that P(r_1) + ... + P(r_i) >= p     (M = all experts if rounding never reaches p)
//     selection = promote(r[:J]; promote(r[:M] ∩ C; r))[:K]
// Flat distributions give a large M (more freedom to use cached experts), peaky ones a small M.
// Needs the full logits: with top-k weights only, the mass beyond the top-k is unknown (and with
// renormalised weights M <= K always, which changes nothing); the factory refuses.
#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "policies/routing/ranking.h"

namespace moesim::policies {
namespace {

class Cumsum final : public RoutingPolicy {
 public:
  Cumsum(const RoutingSetup& s, double p, uint32_t J) : ranker_(s.experts), p_(p), J_(J) {}
  void route(const RoutingContext& ctx, std::span<uint16_t> out) override {
    const InvocationTokens& tok = *ctx.tokens;
    const uint32_t K = tok.top_k();
    auto cached = [&](uint16_t e) { return ctx.residency->cached(ctx.layer, e); };
    for (uint32_t t = 0; t < tok.size(); ++t)
      ranker_.max_rank(tok, t, threshold_rank(tok, t), J_, cached, out.subspan(size_t{t} * K, K));
  }
  // Eq. 8 over the ranking r (recorded top-k first, ranking.h).
  uint32_t threshold_rank(const InvocationTokens& tok, uint32_t t) {
    const auto z = tok.logits(t);
    const uint32_t E = tok.experts();
    double zmax = z[0], sum = 0;
    for (uint32_t e = 0; e < E; ++e) zmax = std::max(zmax, static_cast<double>(z[e]));
    for (uint32_t e = 0; e < E; ++e) sum += std::exp(z[e] - zmax);
    // Walk r lazily: the recorded top-k, then the rest by logit.
    const auto r = ranker_.prefix(tok, t, E);
    double cum = 0;
    for (uint32_t i = 0; i < E; ++i) {
      cum += std::exp(z[r[i]] - zmax) / sum;
      if (cum >= p_) return i + 1;
    }
    return E;
  }

 private:
  routing::Ranker ranker_;
  double p_;
  uint32_t J_;
};

}  // namespace

MOESIM_REGISTER(
    RoutingRegistry, "cumsum",
    "cache-aware Cumulative-Probability-Threshold (Cache-Conditional Experts, Alg. 2): Max-Rank with "
    "M = the smallest rank whose cumulative router probability reaches p",
    {{"p", "0.9", "cumulative probability threshold", ParamType::kReal, ParamRange::closed(0, 1)},
     {"J", "1", "top-J experts always selected", ParamType::kWhole}},
    [](const Params& p, const RoutingSetup& s) -> std::unique_ptr<RoutingPolicy> {
      const double th = p.get_double("p");
      if (!s.has_logits) throw Error(routing::needs_logits_message("cumsum"));
      return std::make_unique<Cumsum>(s, th, static_cast<uint32_t>(p.get_uint("J")));
    },
    PolicyNeeds{.logits = true});

}  // namespace moesim::policies
