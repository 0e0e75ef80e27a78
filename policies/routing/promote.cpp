// promote (J): the naive cache-aware routing of Mixture of Cache-Conditional Experts, §3.1 (Eq. 5 applied
// to the whole cache): every cached expert moves ahead of every uncached one, whatever its rank; the top J
// always stay. It is Max-Rank with M = all experts.
//   for each token: selection = promote(r[:J]; promote(r ∩ C; r))[:K]
// Needs router logits (ranks beyond the top-k).
#include "base/error.h"
#include "policies/routing/ranking.h"

namespace moesim::policies {
namespace {

class Promote final : public RoutingPolicy {
 public:
  Promote(const RoutingSetup& s, uint32_t J) : ranker_(s.experts), experts_(s.experts), J_(J) {}
  void route(const RoutingContext& ctx, std::span<uint16_t> out) override {
    const InvocationTokens& tok = *ctx.tokens;
    const uint32_t K = tok.top_k();
    auto cached = [&](uint16_t e) { return ctx.residency->cached(ctx.layer, e); };
    for (uint32_t t = 0; t < tok.size(); ++t)
      ranker_.max_rank(tok, t, experts_, J_, cached, out.subspan(size_t{t} * K, K));
  }

 private:
  routing::Ranker ranker_;
  uint32_t experts_, J_;
};

}  // namespace

MOESIM_REGISTER(
    RoutingRegistry, "promote",
    "naive cache-aware routing (Cache-Conditional Experts, Eq. 5): every cached expert first, top J "
    "kept",
    {{"J", "1", "top-J experts always selected", ParamType::kWhole}},
    [](const Params& p, const RoutingSetup& s) -> std::unique_ptr<RoutingPolicy> {
      if (!s.has_logits) throw Error(routing::needs_logits_message("promote"));
      return std::make_unique<Promote>(s, static_cast<uint32_t>(p.get_uint("J")));
    },
    PolicyNeeds{.logits = true});

}  // namespace moesim::policies
