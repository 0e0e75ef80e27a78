// ZipMoE's hierarchical cache-pool planner (ZipMoE §3.4, Appendix C Alg. 2-4, Appendix D Eq. (23)-(24)).
// Contracts in policies/planning/zipmoe_planner.h (the vocabulary in core/planning.h); the model and its assumptions in docs/planning.md.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "base/error.h"
#include "policies/planning/zipmoe_planner.h"
#include "base/warnings.h"
#include "traces/ipf.h"

namespace moesim {

PlanDelays zipmoe_plan_delays(const OpEstimator& estimator, uint64_t tensor_bytes, const TensorLayout& layout,
                              uint32_t L, uint32_t tensors, bool fused) {
  if (L == 0 || layout.shards == 0 || tensors == 0)
    throw Error("planner delays: threads L, shards K and tensors per expert n must be at least 1 (got L=" +
                std::to_string(L) + ", K=" + std::to_string(layout.shards) +
                ", n=" + std::to_string(tensors) + ")");
  const uint64_t sm =
      static_cast<uint64_t>(std::llround(layout.sm_fraction * static_cast<double>(tensor_bytes)));
  const double e_raw = static_cast<double>(tensor_bytes - std::min(sm, tensor_bytes));
  const double K = layout.shards;
  Op read_sm;
  read_sm.kind = OpKind::kSsdRead;
  read_sm.resource = default_resource(OpKind::kSsdRead);
  read_sm.part = TensorPart::kSm;
  read_sm.bytes = sm;
  Op read_e = read_sm;
  read_e.part = TensorPart::kE;
  read_e.shard = 0;
  read_e.bytes = static_cast<uint64_t>(std::ceil(layout.e_ratio * e_raw / K));
  Op decompress;
  decompress.kind = OpKind::kDecompress;
  decompress.resource = default_resource(OpKind::kDecompress);
  decompress.part = TensorPart::kE;
  decompress.shard = 0;
  decompress.bytes = static_cast<uint64_t>(std::ceil(e_raw / K));
  PlanDelays d;
  d.u = estimator.estimate(read_sm);
  d.v = estimator.estimate(read_e);
  d.c = estimator.estimate(decompress);
  d.L = L;
  d.K = layout.shards;
  d.n = tensors;
  d.fused = fused;
  if (fused) {
    Op empty = read_e;
    empty.bytes = 0;
    const double latency = estimator.estimate(empty);
    d.u_dev = std::max(d.u - latency, 0.0);
    d.v_dev = std::max(d.v - latency, 0.0);
  }
  return d;
}

std::vector<double> hit_distribution(std::span<const double> q) {
  const size_t s = q.size();
  std::vector<double> phi(s + 1, 0.0);  // line 3
  phi[0] = 1;                           // line 4
  for (size_t r = 0; r < s; ++r) {      // line 5
    for (size_t h = s; h >= 1; --h)     // line 6
      phi[h] = phi[h] * (1 - q[r]) + phi[h - 1] * q[r];
    phi[0] *= 1 - q[r];  // line 10
  }
  return phi;
}

double zipmoe_makespan_estimate(uint32_t k, const std::array<uint32_t, kPools>& h, const PlanDelays& d) {
  const double hF = h[0], hC = h[1], hS = h[2], hE = h[3];
  const double n = d.n, K = d.K, kk = k;
  const double n_sm = n * (kk - (hF + hC + hS));       // line 4
  const double n_e = n * K * (kk - (hF + hC + hE));    // line 5
  const double n_d = n * K * (kk - hF);                // line 8
  const double t_dec = (n_e * d.v + n_d * d.c) / d.L;  // line 9
  if (d.fused)  // the E-chunk reads on the workers (see the header)
    return std::max({n_sm * d.u, t_dec, n_sm * d.u_dev + n_e * d.v_dev});
  const double t_io = n_sm * d.u + n_e * d.v;  // line 6
  return std::max(t_io, t_dec);                // line 10
}

std::vector<double> zipmoe_selection_probabilities(std::span<const double> f, uint32_t k) {
  const traces::IpfResult fit = traces::fit_max_entropy(f, k);
  if (!fit.converged)
    warn("planner: the IPF fit of the inclusion probabilities stopped after " +
         std::to_string(fit.iterations) + " iterations with residual " + std::to_string(fit.max_residual) +
         " (target 1e-12)");
  // sum_r s w_r / (1 + s w_r) grows from 0 to the number of positive weights (> k, checked by the fit).
  auto total = [&](double s) {
    double t = 0;
    for (double w : fit.w) t += s * w / (1 + s * w);
    return t;
  };
  double lo = 1, hi = 1;
  while (total(lo) > k) lo /= 2;
  while (total(hi) < k) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (total(mid) < k ? lo : hi) = mid;
  }
  const double s = 0.5 * (lo + hi);
  std::vector<double> q(fit.w.size());
  for (size_t r = 0; r < q.size(); ++r) q[r] = s * fit.w[r] / (1 + s * fit.w[r]);
  return q;
}

namespace {

// The per-input state of Alg. 4 (lines 4 and 13): q, Phi_N, pool bytes.
struct Planner {
  const PlanningInput& in;
  std::vector<double> q;
  std::vector<double> phi_n;  // Phi_N
  std::array<uint64_t, kPools> bytes;
  uint64_t layer_budget;

  explicit Planner(const PlanningInput& input)
      : in(input),
        q(zipmoe_selection_probabilities(input.f, input.k)),
        phi_n(hit_distribution(q)),
        bytes(pool_expert_bytes(input.expert_bytes, input.layout)),
        layer_budget(input.budget_bytes / input.layers) {
    if (!(phi_n[in.k] > 0)) throw Error("planner: the selection probabilities give P(k selected) = 0");
  }

  // Lines 6-12 for pool budgets already in bytes: sizes, ranks and the Phi_p of each pool and of M.
  struct Packed {
    PoolPlan plan;
    std::array<std::vector<double>, kPools> phi;
    std::vector<double> phi_m;
  };
  Packed pack(const PoolRatios& ratio, const std::array<uint64_t, kPools>& pool_budget) const {
    Packed out;
    PoolPlan& p = out.plan;
    p.ratio = ratio;
    p.budget_bytes = pool_budget;
    p.expert_bytes = bytes;
    uint32_t u = 0;
    for (int i = 0; i < kPools; ++i) {
      if (!in.pools.active[i]) {
        out.phi[i] = {1.0};
        continue;
      }
      const uint64_t s = bytes[i] ? pool_budget[i] / bytes[i] : 0;
      p.experts[i] = static_cast<uint32_t>(std::min<uint64_t>(s, UINT32_MAX));
      p.ranks[i] = static_cast<uint32_t>(std::min<uint64_t>(s, in.experts - u));
      out.phi[i] = hit_distribution(std::span<const double>(q).subspan(u, p.ranks[i]));
      u += p.ranks[i];
    }
    out.phi_m = hit_distribution(std::span<const double>(q).subspan(u));
    return out;
  }

  // Lines 15-29 with every loop bounded by the k selections left (terms with k_rem < 0 are those the
  // printed loop breaks on; h_p above the pool's ranks have Phi_p = 0): C(k + |Lambda|, |Lambda|) terms.
  void expect(Packed& x) const {
    PoolPlan& p = x.plan;
    const uint32_t k = in.k;
    const auto& pf = x.phi[0];
    const auto& pc = x.phi[1];
    const auto& ps = x.phi[2];
    const auto& pe = x.phi[3];
    const double inv_n = 1 / phi_n[k];
    double cost = 0, mass = 0;
    std::array<double, kPools> hits{};
    std::array<uint32_t, kPools> h{};
    for (h[0] = 0; h[0] < pf.size() && h[0] <= k; ++h[0]) {
      const double w0 = pf[h[0]] * inv_n;
      for (h[1] = 0; h[1] < pc.size() && h[0] + h[1] <= k; ++h[1]) {
        const double w1 = w0 * pc[h[1]];
        for (h[2] = 0; h[2] < ps.size() && h[0] + h[1] + h[2] <= k; ++h[2]) {
          const double w2 = w1 * ps[h[2]];
          for (h[3] = 0; h[3] < pe.size() && h[0] + h[1] + h[2] + h[3] <= k; ++h[3]) {
            const uint32_t rem = k - (h[0] + h[1] + h[2] + h[3]);
            if (rem >= x.phi_m.size()) continue;
            const double w = w2 * pe[h[3]] * x.phi_m[rem];
            if (w == 0) continue;
            cost += w * zipmoe_makespan_estimate(k, h, in.delays);
            mass += w;
            for (int i = 0; i < kPools; ++i) hits[i] += w * h[i];
          }
        }
      }
    }
    p.expected_makespan = cost;
    p.expected_hits = hits;
    p.expected_misses = mass * k - (hits[0] + hits[1] + hits[2] + hits[3]);
  }

  PoolPlan evaluate_bytes(const PoolRatios& ratio, const std::array<uint64_t, kPools>& pool_budget) const {
    Packed x = pack(ratio, pool_budget);
    expect(x);
    return x.plan;
  }
};

std::array<uint64_t, kPools> budgets_of_ratios(const PoolRatios& r, uint64_t layer_budget) {
  std::array<uint64_t, kPools> b{};
  for (int p = 0; p < kPools; ++p)
    b[p] =
        std::min(layer_budget, static_cast<uint64_t>(std::floor(r[p] * static_cast<double>(layer_budget))));
  return b;
}

void check_ratios_match_pools(const PlanningInput& in, const PoolRatios& ratios) {
  for (int p = 0; p < kPools; ++p)
    if (ratios[p] > 0 && !in.pools.active[p])
      throw Error(std::string("planner: ratio given for pool ") + pool_name(static_cast<Pool>(p)) +
                  ", which is not in the active set " + in.pools.str());
}

}  // namespace

PoolPlan zipmoe_evaluate(const PlanningInput& in, const PoolRatios& ratios) {
  validate_planning_input(in);
  check_ratios_match_pools(in, ratios);
  const Planner planner(in);
  return planner.evaluate_bytes(ratios, budgets_of_ratios(ratios, planner.layer_budget));
}

double zipmoe_expected_makespan_literal(const PlanningInput& in, const PoolRatios& ratios) {
  validate_planning_input(in);
  check_ratios_match_pools(in, ratios);
  const Planner planner(in);
  const Planner::Packed x = planner.pack(ratios, budgets_of_ratios(ratios, planner.layer_budget));
  auto phi = [&](int p, uint32_t h) { return h < x.phi[p].size() ? x.phi[p][h] : 0.0; };
  const auto& S = x.plan.experts;
  double cost = 0;
  std::array<uint32_t, kPools> h{};
  for (h[0] = 0; h[0] <= S[0]; ++h[0])
    for (h[1] = 0; h[1] <= S[1]; ++h[1])
      for (h[2] = 0; h[2] <= S[2]; ++h[2])
        for (h[3] = 0; h[3] <= S[3]; ++h[3]) {
          const double delay = zipmoe_makespan_estimate(in.k, h, in.delays);
          const int64_t rem = static_cast<int64_t>(in.k) - (h[0] + h[1] + h[2] + h[3]);
          if (rem < 0) break;
          double w = rem < static_cast<int64_t>(x.phi_m.size()) ? x.phi_m[rem] : 0.0;
          w /= planner.phi_n[in.k];
          for (int p = 0; p < kPools; ++p)
            if (in.pools.active[p]) w *= phi(p, h[p]);
          cost += delay * w;
        }
  return cost;
}

PlanResult zipmoe_plan(const PlanningInput& in) {
  validate_planning_input(in);
  const Planner planner(in);
  const uint32_t steps = static_cast<uint32_t>(std::lround(1 / in.grid));
  std::vector<int> active;
  for (int p = 0; p < kPools; ++p)
    if (in.pools.active[p]) active.push_back(p);

  PlanResult result;
  result.q = planner.q;
  std::vector<PoolPlan> all;
  // Line 5: every gamma with sum 1 over Lambda in steps of delta, lexicographically. Integer steps keep
  // the pool budgets exact: floor(i * layer_budget / steps).
  std::array<uint32_t, kPools> units{};
  auto visit = [&](auto&& self, size_t a, uint32_t left) -> void {
    if (a + 1 == active.size()) {
      units[active[a]] = left;
      PoolRatios ratio{};
      std::array<uint64_t, kPools> budget{};
      for (int p = 0; p < kPools; ++p) {
        ratio[p] = static_cast<double>(units[p]) / steps;
        const uint64_t whole = planner.layer_budget / steps, part = planner.layer_budget % steps;
        budget[p] = whole * units[p] + part * units[p] / steps;  // floor(units * layer_budget / steps)
      }
      all.push_back(planner.evaluate_bytes(ratio, budget));
      return;
    }
    for (uint32_t i = 0; i <= left; ++i) {
      units[active[a]] = i;
      self(self, a + 1, left - i);
    }
  };
  visit(visit, 0, steps);
  result.grid_points = all.size();

  // Lines 30-33: the first strict minimum. Runners-up: the next best grid points with pool sizes that
  // differ from the best's and each other's (grid points with equal sizes are the same configuration).
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return all[a].expected_makespan < all[b].expected_makespan; });
  result.best = all[order[0]];
  std::vector<std::array<uint32_t, kPools>> seen = {result.best.experts};
  for (size_t i = 1; i < order.size() && result.runners_up.size() < in.runners_up; ++i) {
    const PoolPlan& p = all[order[i]];
    if (std::find(seen.begin(), seen.end(), p.experts) != seen.end()) continue;
    seen.push_back(p.experts);
    result.runners_up.push_back(p);
  }
  return result;
}

namespace {

class ZipMoePlanner final : public PlanningPolicy {
 public:
  PlanResult plan(const PlanningInput& input) override { return zipmoe_plan(input); }
};

}  // namespace

MOESIM_REGISTER(
    PlanningRegistry, "zipmoe",
    "ZipMoE's hierarchical cache planning (§3.4, Alg. 2-4): grid search over pool ratios minimising "
    "the expected I/O + decompression makespan of a layer",
    {}, [](const Params&) -> std::unique_ptr<PlanningPolicy> { return std::make_unique<ZipMoePlanner>(); });

}  // namespace moesim
