// buddy (profile, H, tau, tau_pct, beta, rho): BuddyMoE's runtime substitution (BuddyMoE, §3.1, §3.3, Alg.
// 1), on the offline profile of `moesim buddy profile` (traces/buddy_profile.h).
//   per invocation (layer l):
//     delta = |requested experts not resident| / |requested experts|          (Eq. 2, over the router's
//                                                                            unique experts of the batch)
//     if delta >= beta: no replacement in this invocation                  (residency gate; beta = 0: never)
//     per token t, U_t = its experts:
//       if TAE_l(t) <= tau: no replacement for t                           (Eq. 1; tau_pct >= 0: tau = that
//                                                                            percentile of the profile's TAE)
//       for each slot k in rank order, e = S[t, k] not resident:
//         if t already replaced rho experts: keep e (fetch it)              (per-token budget)
//         for r = 1..H: b = B_l(e)[r]; if b resident and b not in U_t:
//           S[t, k] = b; U_t += b; break                                   (Alg. 1, lines 14-20)
//         none found: keep e (fetch the original)
// counters(): how often each gate stopped a replacement of a missing expert (beta, tau, rho, no resident
// buddy within H) and how many were replaced. The profile is read once, when the policy is built.
#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "core/routing.h"
#include "traces/buddy_profile.h"

namespace moesim::policies {
namespace {

struct Options {
  uint32_t H = 4, rho = 1;
  double tau = 0, tau_pct = -1, beta = 0.5;
};

class Buddy final : public RoutingPolicy {
 public:
  Buddy(traces::BuddyProfile p, const Options& o) : p_(std::move(p)), o_(o), mark_(p_.experts, 0) {
    tau_.assign(p_.layers, o.tau);
    if (o.tau_pct >= 0)
      for (uint32_t l = 0; l < p_.layers; ++l) {
        const double pos = o.tau_pct;  // percentiles are stored at 0, 1, ..., 100
        const auto lo = static_cast<size_t>(pos);
        const auto& v = p_.layer[l].tae_percentiles;
        tau_[l] = lo >= 100 ? v[100] : v[lo] + (v[lo + 1] - v[lo]) * (pos - static_cast<double>(lo));
      }
  }

  void route(const RoutingContext& ctx, std::span<uint16_t> out) override {
    const InvocationTokens& tok = *ctx.tokens;
    const uint32_t K = tok.top_k(), l = ctx.layer;
    auto resident = [&](uint16_t e) { return ctx.residency->cached(l, e); };
    // Eq. 2 over the invocation's unique requested experts.
    uint32_t requested = 0, missing = 0;
    for (uint32_t t = 0; t < tok.size(); ++t)
      for (uint16_t e : tok.ids(t))
        if (!mark_[e]) {
          mark_[e] = 1;
          ++requested;
          missing += !resident(e);
        }
    for (uint32_t t = 0; t < tok.size(); ++t)
      for (uint16_t e : tok.ids(t)) mark_[e] = 0;
    const bool beta_stop = requested == 0 || static_cast<double>(missing) / requested >= o_.beta;
    for (uint32_t t = 0; t < tok.size(); ++t) {
      const auto s = out.subspan(size_t{t} * K, K);
      uint32_t missing_t = 0;
      for (uint16_t e : s) missing_t += !resident(e);
      if (missing_t == 0) continue;
      if (beta_stop) {
        stop_beta_ += missing_t;
        continue;
      }
      traces::topk_probabilities(tok.ids(t), tok.weights(t), tok.logits(t), probs_);
      if (traces::token_activating_entropy(probs_) <= tau_[l]) {
        stop_tau_ += missing_t;
        continue;
      }
      uint32_t replaced = 0;
      for (uint16_t e : s) mark_[e] = 1;  // U_t
      for (uint32_t k = 0; k < K; ++k) {
        const uint16_t e = s[k];
        if (resident(e)) continue;
        if (replaced >= o_.rho) {
          ++stop_rho_;
          continue;
        }
        const auto& list = p_.layer[l].buddies[e];
        bool done = false;
        for (uint32_t r = 0; r < std::min<size_t>(o_.H, list.size()) && !done; ++r) {
          const uint16_t b = list[r];
          if (resident(b) && !mark_[b]) {
            s[k] = b;
            mark_[b] = 1;
            ++replaced;
            done = true;
          }
        }
        if (done) {
          ++replaced_;
        } else {
          ++stop_no_buddy_;
        }
      }
      for (uint16_t e : tok.ids(t)) mark_[e] = 0;
      for (uint16_t e : s) mark_[e] = 0;
    }
  }

  Json counters() const override {
    return Json{{"replaced", replaced_},
                {"stopped_by_beta", stop_beta_},
                {"stopped_by_tau", stop_tau_},
                {"stopped_by_rho", stop_rho_},
                {"no_resident_buddy", stop_no_buddy_}};
  }

 private:
  traces::BuddyProfile p_;
  Options o_;
  std::vector<double> tau_;
  std::vector<uint8_t> mark_;
  std::vector<double> probs_;
  uint64_t replaced_ = 0, stop_beta_ = 0, stop_tau_ = 0, stop_rho_ = 0, stop_no_buddy_ = 0;
};

}  // namespace

MOESIM_REGISTER(
    RoutingRegistry, "buddy",
    "BuddyMoE (Alg. 1): replace a missing expert by a resident co-activation buddy, behind the TAE gate "
    "tau, the residency gate beta and a per-token budget rho",
    {{"profile", "", "buddy profile JSON from `moesim buddy profile` (required)"},
     {"H", "4", "buddies searched per missing expert", ParamType::kWhole},
     {"tau", "0", "TAE gate: no replacement for a token with TAE <= tau (Eq. 1)", ParamType::kReal},
     {"tau_pct", "-1", "if >= 0: tau = this percentile (0-100) of the profile's per-layer TAE",
      ParamType::kReal, ParamRange::at_most(100)},
     {"beta", "0.5",
      "residency gate: no replacement when the missing share of requested experts "
      ">= beta (Eq. 2; 0 = never replace)",
      ParamType::kReal, ParamRange::closed(0, 1)},
     {"rho", "1", "replacements per token at most", ParamType::kWhole}},
    [](const Params& p, const RoutingSetup& s) -> std::unique_ptr<RoutingPolicy> {
      const std::string path = p.get("profile");
      if (path.empty())
        throw UsageError(
            "buddy: profile=FILE is required (write one with `moesim buddy profile --trace T "
            "-o buddies.json`)");
      Options o;
      o.H = static_cast<uint32_t>(p.get_uint("H"));
      o.rho = static_cast<uint32_t>(p.get_uint("rho"));
      o.tau = p.get_double("tau");
      o.tau_pct = p.get_double("tau_pct");
      o.beta = p.get_double("beta");
      auto prof = traces::buddy_profile_from_json(load_json_file(path), path);
      if (prof.layers != s.layers || prof.experts != s.experts)
        throw Error(path + ": the buddy profile is for " + std::to_string(prof.layers) + " layers x " +
                    std::to_string(prof.experts) + " experts, the trace has " + std::to_string(s.layers) +
                    " x " + std::to_string(s.experts));
      return std::make_unique<Buddy>(std::move(prof), o);
    });

}  // namespace moesim::policies
