#include "traces/ipf.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"

namespace moesim::traces {

std::vector<double> inclusion_from_weights(std::span<const double> p, uint32_t k, double cap) {
  const size_t n = p.size();
  size_t positive = 0;
  for (double x : p) {
    if (!(x >= 0) || !std::isfinite(x)) throw Error("inclusion probabilities: negative or non-finite weight");
    positive += x > 0;
  }
  if (positive <= k || cap * static_cast<double>(positive) < k)
    throw Error("inclusion probabilities: " + std::to_string(positive) +
                " experts with positive weight cannot give " + std::to_string(k) +
                " distinct experts per token with every inclusion probability below " + std::to_string(cap));
  // Sort descending; the capped ones are a prefix. For each prefix length c, the rest share k - c*cap.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  double rest = 0;
  for (double x : p) rest += x;
  std::vector<double> f(n, 0.0);
  for (size_t c = 0; c <= k; ++c) {
    const double scale = (static_cast<double>(k) - static_cast<double>(c) * cap) / rest;
    // Valid when the largest uncapped entry stays below the cap.
    if (c == n || p[order[c]] * scale <= cap) {
      for (size_t i = 0; i < n; ++i) f[order[i]] = i < c ? cap : p[order[i]] * scale;
      return f;
    }
    rest -= p[order[c]];
  }
  throw Error("inclusion probabilities: water-filling failed");  // unreachable: positive > k
}

IpfResult fit_max_entropy(std::span<const double> f, uint32_t k, std::span<const PairTarget> pairs,
                          const IpfOptions& opt) {
  const size_t n = f.size();
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(f[i] >= 0 && f[i] < 1))
      throw Error("IPF: inclusion probability of expert " + std::to_string(i) + " is " +
                  std::to_string(f[i]) + ", outside [0, 1)");
    sum += f[i];
  }
  if (std::abs(sum - k) > 1e-6)
    throw Error("IPF: inclusion probabilities sum to " + std::to_string(sum) +
                ", expected top-k = " + std::to_string(k));
  // Units: pairs first (in the order given), then the remaining experts with f_i > 0 as singles.
  std::vector<int64_t> unit_of(n, -1);
  IpfResult res;
  for (size_t p = 0; p < pairs.size(); ++p) {
    const PairTarget& t = pairs[p];
    if (t.a >= n || t.b >= n || t.a == t.b || unit_of[t.a] >= 0 || unit_of[t.b] >= 0)
      throw Error("IPF: pair " + std::to_string(p) + " (" + std::to_string(t.a) + "," + std::to_string(t.b) +
                  ") is out of range or reuses an expert");
    if (!(t.f_ab > 0 && t.f_ab < std::min(f[t.a], f[t.b])))
      throw Error("IPF: pair (" + std::to_string(t.a) + "," + std::to_string(t.b) + ") target " +
                  std::to_string(t.f_ab) + " outside (0, min(f_a, f_b))");
    unit_of[t.a] = unit_of[t.b] = static_cast<int64_t>(res.units.size());
    res.units.push_back({t.a, t.b, f[t.a], f[t.b], 0});
    res.phi.push_back(t.f_ab / (f[t.a] * f[t.b]));
  }
  for (size_t i = 0; i < n; ++i)
    if (f[i] > 0 && unit_of[i] < 0) res.units.push_back({static_cast<uint32_t>(i), kNoExpert, f[i], 0, 0});
  const size_t npairs = pairs.size();
  auto refresh_pairs = [&] {
    for (size_t p = 0; p < npairs; ++p) res.units[p].wab = res.units[p].wa * res.units[p].wb * res.phi[p];
  };
  auto residual = [&](const CpInclusion& inc) {
    double r = 0;
    for (size_t i = 0; i < n; ++i) r = std::max(r, std::abs(inc.expert[i] - f[i]));
    for (size_t p = 0; p < npairs; ++p) r = std::max(r, std::abs(inc.pair[p] - pairs[p].f_ab));
    return r;
  };
  refresh_pairs();
  const uint32_t experts = static_cast<uint32_t>(n);
  const bool odds = opt.update == IpfUpdate::kOdds;
  // Multiplicative factor that moves fitted probability p towards target t.
  auto factor = [&](double t, double p, double gamma) {
    const double r = odds ? (t / (1 - t)) / (p / std::max(1 - p, 1e-300)) : t / p;
    return gamma == 1.0 ? r : std::pow(r, gamma);
  };
  CpInclusion inc = cp_inclusion(res.units, k, experts);
  res.max_residual = residual(inc);
  // The odds step can overshoot (e.g. k close to n); then it is shortened (factor^gamma, gamma halved)
  // until the residual decreases. Eq. (24) as printed (kProportional) always takes the full step.
  double gamma = 1.0;
  for (res.iterations = 0;; ++res.iterations) {
    if (res.max_residual <= opt.tolerance) {
      res.converged = true;
      break;
    }
    if (res.iterations >= opt.max_iterations) break;
    std::vector<CpUnit> units = res.units;
    std::vector<double> phi = res.phi;
    // Eq. (24): w_i <- w_i * f_i / f_i^(t), every expert at once (or its odds form, see the header).
    double mx = 0;
    for (CpUnit& u : units) {
      u.wa *= factor(f[u.a], inc.expert[u.a], gamma);
      if (u.is_pair()) u.wb *= factor(f[u.b], inc.expert[u.b], gamma);
      mx = std::max({mx, u.wa, u.wb});
    }
    // P(S) is invariant to w -> c w (a size-k subset scales by c^k), so keep max w = 1.
    for (CpUnit& u : units) {
      u.wa /= mx;
      u.wb /= mx;
    }
    for (size_t p = 0; p < npairs; ++p) units[p].wab = units[p].wa * units[p].wb * phi[p];
    if (npairs > 0) {
      const CpInclusion mid = cp_inclusion(units, k, experts);
      for (size_t p = 0; p < npairs; ++p) {
        phi[p] *= factor(pairs[p].f_ab, mid.pair[p], gamma);
        units[p].wab = units[p].wa * units[p].wb * phi[p];
      }
    }
    CpInclusion next = cp_inclusion(units, k, experts);
    const double r = residual(next);
    if (!odds || r < res.max_residual || gamma < 1e-6) {
      res.units = std::move(units);
      res.phi = std::move(phi);
      inc = std::move(next);
      res.max_residual = r;
      gamma = std::min(1.0, gamma * 2);
    } else {
      gamma *= 0.5;
    }
  }
  res.w.assign(n, 0.0);
  for (const CpUnit& u : res.units) {
    res.w[u.a] = u.wa;
    if (u.is_pair()) res.w[u.b] = u.wb;
  }
  return res;
}

}  // namespace moesim::traces
