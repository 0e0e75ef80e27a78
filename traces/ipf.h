// Fitting the maximum-entropy distribution over k-subsets to target inclusion probabilities: the modified
// iterative proportional fitting of ZipMoE (Appendix D, Eq. (23)-(24); Chen,
// Dempster & Liu 1994). Given f_i with sum f_i = k and 0 <= f_i < 1, it finds weights w_i such that the
// conditional Poisson distribution P(S) ~ prod_{i in S} w_i has P(i in S) = f_i; then q_i = w_i / (1 + w_i)
// are the paper's selection probabilities.
//
// Extension (documented in docs/synth.md): optional disjoint expert pairs (a, b) with a target joint
// probability f_ab get a pair factor phi_ab, fitted in the same loop (generalised iterative scaling: after
// the Eq. (24) update of every w_i, phi_ab <- phi_ab * f_ab / P(a, b in S)). The result is the
// maximum-entropy distribution with those single and pair marginals.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "traces/conditional_poisson.h"

namespace moesim::traces {

// Largest inclusion probability a fitted target may have: f_i = 1 needs an infinite weight.
inline constexpr double kMaxInclusion = 0.999;

// Water-filling: f_i = min(cap, c * p_i) with c chosen so that sum f_i = k (p_i >= 0, not all zero).
// Throws moesim::Error when fewer than k + 1 entries are positive or cap * positives < k (no such f).
std::vector<double> inclusion_from_weights(std::span<const double> p, uint32_t k, double cap = kMaxInclusion);

struct PairTarget {
  uint32_t a = 0, b = 0;
  double f_ab = 0;  // target P(a and b in S); must be < min(f_a, f_b)
};

enum class IpfUpdate {
  // Eq. (24) as printed: w_i <- w_i * f_i / f_i^(t). Converges geometrically but slowly when some f_i is
  // close to 1 (thousands of iterations at f_i = 0.999).
  kProportional,
  // The same fixed point reached through odds: w_i <- w_i * [f_i / (1 - f_i)] / [f_i^(t) / (1 - f_i^(t))].
  // For unconditioned Poisson sampling (f_i = w_i / (1 + w_i)) this is exact in one step, and for
  // conditional Poisson it converges in tens of iterations where kProportional needs thousands. The
  // result is the same w* (up to scale): f_i^(t) = f_i is the fixed point of both.
  kOdds,
};

struct IpfOptions {
  double tolerance = 1e-12;  // on max |P(i in S) - f_i| (and pairs)
  uint32_t max_iterations = 5000;
  IpfUpdate update = IpfUpdate::kOdds;
};

struct IpfResult {
  std::vector<double> w;      // per expert (0 where f_i = 0), scaled so max w = 1
  std::vector<double> phi;    // per pair target, the pair factor
  std::vector<CpUnit> units;  // ready for CpSampler
  double max_residual = 0;    // max |fitted - target| at the end
  uint32_t iterations = 0;
  bool converged = false;
};

// Throws moesim::Error on invalid targets (sum != k within 1e-6, an f_i outside [0, 1), a pair that
// reuses an expert, a pair target outside (0, min(f_a, f_b))).
IpfResult fit_max_entropy(std::span<const double> f, uint32_t k, std::span<const PairTarget> pairs = {},
                          const IpfOptions& opt = {});

}  // namespace moesim::traces
