// random-resident (seed, rho): the "Random" replacement baseline of BuddyMoE (§5.1, Tables 2-4): a missing
// expert is replaced by an expert drawn uniformly from the layer's resident experts, with no gate and no
// profile (BuddyMoE's own policy is `buddy`, policies/routing/buddy.cpp).
//   per token t, U_t = its experts; for each slot k in rank order, e = S[t, k] not resident:
//     if t already replaced rho experts: keep e (fetch it)
//     C = resident experts of the layer not in U_t; C empty: keep e
//     else S[t, k] = a uniform draw from C; U_t += it
// The draws come from one seeded stream (base/rng.h) consumed in invocation order, so a run is reproducible.
// counters(): replaced, stopped_by_rho, no_resident_candidate.
#include <vector>

#include "base/error.h"
#include "base/rng.h"
#include "core/routing.h"

namespace moesim::policies {
namespace {

class RandomResident final : public RoutingPolicy {
 public:
  RandomResident(const RoutingSetup& s, uint64_t seed, uint64_t rho)
      : rng_(seed), rho_(rho), mark_(s.experts, 0) {}

  void route(const RoutingContext& ctx, std::span<uint16_t> out) override {
    const InvocationTokens& tok = *ctx.tokens;
    const uint32_t K = ctx.top_k, l = ctx.layer, E = tok.experts();
    for (uint32_t t = 0; t < tok.size(); ++t) {
      const auto s = out.subspan(size_t{t} * K, K);
      uint64_t replaced = 0;
      for (uint16_t e : s)
        if (e != kNoExpert) mark_[e] = 1;  // U_t
      for (uint32_t k = 0; k < K; ++k) {
        const uint16_t e = s[k];
        if (e == kNoExpert || ctx.residency->cached(l, e)) continue;
        if (replaced >= rho_) {
          ++stop_rho_;
          continue;
        }
        candidates_.clear();
        for (uint32_t b = 0; b < E; ++b)
          if (!mark_[b] && ctx.residency->cached(l, b)) candidates_.push_back(static_cast<uint16_t>(b));
        if (candidates_.empty()) {
          ++no_candidate_;
          continue;
        }
        const uint16_t b = candidates_[rng_.below(candidates_.size())];
        s[k] = b;
        mark_[b] = 1;
        ++replaced;
        ++replaced_;
      }
      for (uint16_t e : tok.ids(t)) mark_[e] = 0;
      for (uint16_t e : s)
        if (e != kNoExpert) mark_[e] = 0;
    }
  }

  Json counters() const override {
    return Json{
        {"replaced", replaced_}, {"stopped_by_rho", stop_rho_}, {"no_resident_candidate", no_candidate_}};
  }

 private:
  Rng rng_;
  uint64_t rho_;
  std::vector<uint8_t> mark_;
  std::vector<uint16_t> candidates_;
  uint64_t replaced_ = 0, stop_rho_ = 0, no_candidate_ = 0;
};

}  // namespace

MOESIM_REGISTER(
    RoutingRegistry, "random-resident",
    "BuddyMoE's Random baseline (§5.1): replace a missing expert by a uniformly drawn resident expert "
    "the token does not use, no gate",
    {{"seed", "1", "seed of the draws", ParamType::kWhole},
     {"rho", "4294967295", "replacements per token at most (default: no limit)", ParamType::kWhole}},
    [](const Params& p, const RoutingSetup& s) -> std::unique_ptr<RoutingPolicy> {
      return std::make_unique<RandomResident>(s, p.get_uint("seed"), p.get_uint("rho"));
    });

}  // namespace moesim::policies
