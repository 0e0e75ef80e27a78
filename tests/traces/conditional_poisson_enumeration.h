// Test helper: the distribution P(S) ~ prod w * prod pair factors over all size-k subsets of n <= 20
// experts, by brute-force enumeration (the ground truth for the DP and IPF tests).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "traces/conditional_poisson.h"

namespace moesim::traces {

struct Enumerated {
  std::map<uint32_t, double> subset;  // bit mask -> probability (only possible subsets)
  std::vector<double> expert;         // P(i in S)
  double joint(uint32_t a, uint32_t b) const {
    double p = 0;
    for (const auto& [m, q] : subset)
      if ((m >> a & 1) && (m >> b & 1)) p += q;
    return p;
  }
};

inline Enumerated enumerate_subsets(const std::vector<CpUnit>& units, uint32_t k, uint32_t n) {
  Enumerated r;
  r.expert.assign(n, 0.0);
  double z = 0;
  for (uint32_t m = 0; m < (1u << n); ++m) {
    if (static_cast<uint32_t>(__builtin_popcount(m)) != k) continue;
    double w = 1;
    uint32_t covered = 0;
    for (const CpUnit& u : units) {
      const bool a = m >> u.a & 1;
      covered |= 1u << u.a;
      if (!u.is_pair()) {
        if (a) w *= u.wa;
        continue;
      }
      covered |= 1u << u.b;
      const bool b = m >> u.b & 1;
      if (a && b)
        w *= u.wab;
      else if (a)
        w *= u.wa;
      else if (b)
        w *= u.wb;
    }
    if ((m & ~covered) != 0 || w == 0) continue;  // uses an expert outside every unit
    r.subset[m] = w;
    z += w;
  }
  for (auto& [m, w] : r.subset) {
    w /= z;
    for (uint32_t i = 0; i < n; ++i)
      if (m >> i & 1) r.expert[i] += w;
  }
  return r;
}

}  // namespace moesim::traces
