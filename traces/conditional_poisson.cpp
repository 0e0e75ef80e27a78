#include "traces/conditional_poisson.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "base/error.h"

namespace moesim::traces {
namespace {

// next = prev (x) poly(unit), then rescaled so its largest entry is 1 (the scale of a row never matters,
// see the header). `n` = size + 1 coefficients.
void extend(const double* prev, const CpUnit& u, double* next, size_t n) {
  double mx = 0;
  for (size_t j = 0; j < n; ++j) {
    double v = prev[j];
    if (j >= 1) v += (u.wa + u.wb) * prev[j - 1];
    if (j >= 2 && u.is_pair()) v += u.wab * prev[j - 2];
    next[j] = v;
    mx = std::max(mx, v);
  }
  if (!(mx > 0) || !std::isfinite(mx))
    throw Error("conditional Poisson: weights out of range (overflow or all zero)");
  for (size_t j = 0; j < n; ++j) next[j] /= mx;
}

// Multiplying every weight by c scales every size-k subset by c^k, so P(S) does not change; choosing c =
// 1 / (the (size)-th largest weight) centres the polynomial coefficients around x^size and keeps the
// entries a draw reads far from underflow even when weights span many orders of magnitude.
std::vector<CpUnit> tilted(std::span<const CpUnit> units, size_t size) {
  std::vector<double> w;
  for (const CpUnit& u : units) {
    w.push_back(u.wa);
    if (u.is_pair()) w.push_back(u.wb);
  }
  std::vector<CpUnit> out(units.begin(), units.end());
  if (w.empty() || size == 0) return out;
  const size_t i = std::min(size, w.size()) - 1;
  std::nth_element(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(i), w.end(), std::greater<>());
  if (!(w[i] > 0) || !std::isfinite(w[i])) return out;
  const double c = 1.0 / w[i];
  for (CpUnit& u : out) {
    u.wa *= c;
    u.wb *= c;
    u.wab *= c * c;
  }
  return out;
}

std::vector<double> table(std::span<const CpUnit> units, size_t n, bool suffix) {
  const size_t U = units.size();
  std::vector<double> t((U + 1) * n, 0.0);
  if (suffix) {
    t[U * n] = 1.0;
    for (size_t u = U; u-- > 0;) extend(&t[(u + 1) * n], units[u], &t[u * n], n);
  } else {
    t[0] = 1.0;
    for (size_t u = 0; u < U; ++u) extend(&t[u * n], units[u], &t[(u + 1) * n], n);
  }
  return t;
}

}  // namespace

std::vector<CpUnit> single_units(std::span<const double> w) {
  std::vector<CpUnit> units;
  for (size_t i = 0; i < w.size(); ++i)
    if (w[i] > 0) units.push_back({static_cast<uint32_t>(i), kNoExpert, w[i], 0, 0});
  return units;
}

CpSampler::CpSampler(std::vector<CpUnit> units, uint32_t size) : units_(tilted(units, size)), size_(size) {
  const size_t n = size_t{size} + 1;
  suffix_ = table(units_, n, /*suffix=*/true);
  if (!(suffix_[size] > 0))
    throw Error("conditional Poisson: no subset of " + std::to_string(size) +
                " experts has positive weight (" + std::to_string(units_.size()) + " units)");
}

void CpSampler::draw(Rng& rng, std::vector<uint32_t>& out) const {
  const size_t n = size_t{size_} + 1;
  uint32_t r = size_;
  for (size_t u = 0; u < units_.size() && r > 0; ++u) {
    const CpUnit& c = units_[u];
    const double* next = &suffix_[(u + 1) * n];
    // State weights: none, a alone, b alone, both; each times R(r - size, later units).
    const double p0 = next[r];
    const double pa = c.wa * next[r - 1];
    const double pb = c.is_pair() ? c.wb * next[r - 1] : 0.0;
    const double pab = (c.is_pair() && r >= 2) ? c.wab * next[r - 2] : 0.0;
    const double total = p0 + pa + pb + pab;
    if (!(total > 0) || !std::isfinite(total))
      throw Error("conditional Poisson: weights span too wide a range for double precision");
    const double x = rng.uniform() * total;
    if (x < p0) continue;
    if (x < p0 + pa) {
      out.push_back(c.a);
      r -= 1;
    } else if (x < p0 + pa + pb) {
      out.push_back(c.b);
      r -= 1;
    } else {
      out.push_back(c.a);
      out.push_back(c.b);
      r -= 2;
    }
  }
  // r > 0 here would mean the table admitted a subset the walk cannot reach: impossible by construction
  // (the states' weights sum to the row entry that is > 0), so no fallback is needed.
}

CpInclusion cp_inclusion(std::span<const CpUnit> units_in, uint32_t size, uint32_t experts) {
  const std::vector<CpUnit> units = tilted(units_in, size);
  const size_t n = size_t{size} + 1;
  const std::vector<double> pre = table(units, n, false);
  const std::vector<double> suf = table(units, n, true);
  if (!(pre[units.size() * n + size] > 0))
    throw Error("conditional Poisson: no subset of " + std::to_string(size) + " experts has positive weight");
  CpInclusion inc;
  inc.expert.assign(experts, 0.0);
  inc.pair.assign(units.size(), 0.0);
  for (size_t u = 0; u < units.size(); ++u) {
    const double* p = &pre[u * n];
    const double* s = &suf[(u + 1) * n];
    // Q[j] = coefficient of x^j in (product of the other units), for j = size-2 .. size.
    auto q = [&](int64_t j) {
      if (j < 0) return 0.0;
      double v = 0;
      for (int64_t i = 0; i <= j; ++i) v += p[i] * s[j - i];
      return v;
    };
    const CpUnit& c = units[u];
    const double q0 = q(size), q1 = q(int64_t{size} - 1), q2 = q(int64_t{size} - 2);
    const double sa = c.wa * q1, sb = c.is_pair() ? c.wb * q1 : 0.0, sab = c.is_pair() ? c.wab * q2 : 0.0;
    const double total = q0 + sa + sb + sab;
    if (!(total > 0) || !std::isfinite(total))
      throw Error("conditional Poisson: weights span too wide a range for double precision");
    if (c.a < experts) inc.expert[c.a] = (sa + sab) / total;
    if (c.is_pair()) {
      if (c.b < experts) inc.expert[c.b] = (sb + sab) / total;
      inc.pair[u] = sab / total;
    }
  }
  return inc;
}

}  // namespace moesim::traces
