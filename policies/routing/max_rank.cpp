// max-rank (M, J): Mixture of Cache-Conditional Experts, §3.1, Alg. 1 (Eq. 6-7; worked example in App. B).
//   for each token: r = the router's ranking (policies/routing/ranking.h)
//     r' = promote(r[:M] ∩ C; r)        -- cached experts among the top M move to the front, in r order
//     r' = promote(r[:J]; r')           -- the top J always stay
//     selection = r'[:K]
// M <= K only reorders the token's own top-K: the selection (hence every lookup) is the router's, exactly.
// M > K needs ranks beyond the top-k, i.e. router logits; without them the factory refuses.
#include <algorithm>

#include "base/error.h"
#include "policies/routing/ranking.h"

namespace moesim::policies {
namespace {

class MaxRank final : public RoutingPolicy {
 public:
  MaxRank(const RoutingSetup& s, uint32_t M, uint32_t J)
      : ranker_(s.experts), M_(std::min(M, s.experts)), J_(J) {}
  void route(const RoutingContext& ctx, std::span<uint16_t> out) override {
    const InvocationTokens& tok = *ctx.tokens;
    const uint32_t K = tok.top_k();
    auto cached = [&](uint16_t e) { return ctx.residency->cached(ctx.layer, e); };
    for (uint32_t t = 0; t < tok.size(); ++t)
      ranker_.max_rank(tok, t, M_, J_, cached, out.subspan(size_t{t} * K, K));
  }

 private:
  routing::Ranker ranker_;
  uint32_t M_, J_;
};

}  // namespace

MOESIM_REGISTER(
    RoutingRegistry, "max-rank",
    "cache-aware Max-Rank (Cache-Conditional Experts, Alg. 1): promote cached experts ranked < M, "
    "always keep the top J",
    {{"M", "8", "maximum rank (1-based) a cached expert may be promoted from", ParamType::kWhole,
      ParamRange::at_least(1)},
     {"J", "1", "top-J experts always selected", ParamType::kWhole}},
    [](const Params& p, const RoutingSetup& s) -> std::unique_ptr<RoutingPolicy> {
      const uint64_t M = p.get_uint("M"), J = p.get_uint("J");
      if (M > s.top_k && !s.has_logits)
        throw Error(routing::needs_logits_message("max-rank:M=" + std::to_string(M) + " (top-" +
                                                  std::to_string(s.top_k) + ")"));
      return std::make_unique<MaxRank>(s, static_cast<uint32_t>(M), static_cast<uint32_t>(J));
    });

}  // namespace moesim::policies
