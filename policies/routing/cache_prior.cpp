// cache-prior (lambda, J, delta): Cache-Prior reranking, Mixture of Cache-Conditional Experts, §3.3,
// Eq. 9-10.
//   for each token at layer l, with router logits z:
//     Delta_l = running average over the tokens seen so far at layer l (this one included) of
//               max(z) - min(z)                                        (Eq. 10; `delta` > 0 fixes it)
//     m~ = cache mask C, plus the router's top J                       (so they are always selected)
//     z' = z + lambda * Delta_l * m~                                   (Eq. 9)
//     selection = the K experts of largest z' (ties: the router's ranking r)
//   z' only reranks; the weights the model would use are unchanged (not modelled here).
// The recorded top-k is ground truth (policies/routing/ranking.h): an expert outside it scores at most
// the lowest recorded logit, so lambda = 0 selects exactly the router's top-k even where a trace's logits
// disagree with its recorded selection. Needs logits; the factory refuses without them.
#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "policies/routing/ranking.h"

namespace moesim::policies {
namespace {

class CachePrior final : public RoutingPolicy {
 public:
  CachePrior(const RoutingSetup& s, double lambda, uint32_t J, double delta)
      : ranker_(s.experts),
        lambda_(lambda),
        J_(J),
        fixed_delta_(delta),
        sum_(s.layers, 0.0),
        n_(s.layers, 0),
        score_(s.experts),
        rank_(s.experts),
        order_(s.experts) {}

  void route(const RoutingContext& ctx, std::span<uint16_t> out) override {
    const InvocationTokens& tok = *ctx.tokens;
    const uint32_t K = tok.top_k(), E = tok.experts();
    for (uint32_t t = 0; t < tok.size(); ++t) {
      const auto z = tok.logits(t);
      const auto ids = tok.ids(t);
      float zmin = z[0], zmax = z[0];
      for (uint32_t e = 1; e < E; ++e) {
        zmin = std::min(zmin, z[e]);
        zmax = std::max(zmax, z[e]);
      }
      sum_[ctx.layer] += static_cast<double>(zmax) - zmin;
      ++n_[ctx.layer];
      const double delta =
          fixed_delta_ > 0 ? fixed_delta_ : sum_[ctx.layer] / static_cast<double>(n_[ctx.layer]);
      const double boost = lambda_ * delta;
      // Base scores: recorded experts keep their logits, the others at most the lowest recorded one.
      double floor = z[ids[0]];
      for (uint32_t r = 0; r < K; ++r) floor = std::min(floor, static_cast<double>(z[ids[r]]));
      for (uint32_t e = 0; e < E; ++e) {
        score_[e] = std::min(static_cast<double>(z[e]), floor);
        rank_[e] = K + 1;  // outside the top-k: after every recorded expert on ties
      }
      for (uint32_t r = 0; r < K; ++r) {
        score_[ids[r]] = z[ids[r]];
        rank_[ids[r]] = r;
      }
      for (uint32_t e = 0; e < E; ++e)
        if (ctx.residency->cached(ctx.layer, e)) score_[e] += boost;
      for (uint32_t r = 0; r < std::min(J_, K); ++r)
        if (!ctx.residency->cached(ctx.layer, ids[r])) score_[ids[r]] += boost;
      for (uint32_t e = 0; e < E; ++e) order_[e] = static_cast<uint16_t>(e);
      const auto better = [&](uint16_t a, uint16_t b) {
        if (score_[a] != score_[b]) return score_[a] > score_[b];
        if (rank_[a] != rank_[b]) return rank_[a] < rank_[b];
        if (z[a] != z[b]) return z[a] > z[b];
        return a < b;
      };
      std::partial_sort(order_.begin(), order_.begin() + K, order_.end(), better);
      auto& chosen = ranker_.chosen();
      chosen.clear();
      for (uint32_t i = 0; i < K; ++i) ranker_.take(order_[i]);
      ranker_.write(ids, out.subspan(size_t{t} * K, K));
    }
  }

  Json counters() const override {
    Json d = Json::array();
    for (size_t l = 0; l < sum_.size(); ++l)
      d.push_back(n_[l] ? Json(sum_[l] / static_cast<double>(n_[l])) : Json(nullptr));
    return Json{{"delta_avg_per_layer", d}};
  }

 private:
  routing::Ranker ranker_;
  double lambda_;
  uint32_t J_;
  double fixed_delta_;
  std::vector<double> sum_;
  std::vector<uint64_t> n_;
  std::vector<double> score_;
  std::vector<uint32_t> rank_;
  std::vector<uint16_t> order_;
};

}  // namespace

MOESIM_REGISTER(
    RoutingRegistry, "cache-prior",
    "Cache-Prior reranking (Cache-Conditional Experts, Eq. 9-10): add lambda x the average logit range "
    "to cached experts' logits, keep the top J",
    {{"lambda", "0.5", "cache bias (0 = the router's routing)", ParamType::kReal, ParamRange::closed(0, 1)},
     {"J", "1", "top-J experts always selected", ParamType::kWhole},
     {"delta", "0", "fixed logit range Delta (e.g. from a calibration trace); 0 = running average",
      ParamType::kReal, ParamRange::at_least(0)}},
    [](const Params& p, const RoutingSetup& s) -> std::unique_ptr<RoutingPolicy> {
      const double lambda = p.get_double("lambda"), delta = p.get_double("delta");
      if (!s.has_logits)
        throw Error(
            "cache-prior needs router logits (Eq. 9 boosts logits), and this trace has none. "
            "Attach synthetic logits consistent with its recorded routing: moesim trace synth "
            "--logits-for TRACE -o T.mtr");
      return std::make_unique<CachePrior>(s, lambda, static_cast<uint32_t>(p.get_uint("J")), delta);
    },
    PolicyNeeds{.logits = true});

}  // namespace moesim::policies
