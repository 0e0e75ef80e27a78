// Conditional Poisson sampling: exact draws of a fixed-size subset S of experts with
//   P(S) proportional to  prod_{i in S} w_i  *  prod_{pairs (a,b) in S} phi_ab,
// the maximum-entropy distribution over k-subsets with given inclusion probabilities (ZipMoE,
// Appendix D, Eq. (18)-(22)), extended with optional pair factors so that chosen
// co-activations can be fitted too (the max-entropy distribution with pair-marginal constraints).
//
// Representation: a list of *units*. A unit is a single expert a (generating polynomial 1 + w_a x) or a
// disjoint pair (a, b) (polynomial 1 + w_a x + w_b x + w_ab x^2, with w_ab = w_a w_b phi_ab). An expert
// appears in at most one unit. The normalising constant of size-k subsets is the coefficient of x^k of the
// product of the unit polynomials -- for singles only, the elementary symmetric polynomial R(k, N) of
// Eq. (23). The sampler walks the units once, choosing each unit's state with probability proportional to
// (state weight) x R(remaining - state size, later units) (the sequential method for conditional Poisson
// sampling, Chen, Dempster & Liu 1994). The suffix table is rescaled row by row: a state's probability is
// a ratio of entries of one row, so the scale of each row cancels and nothing overflows for any top-k.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/rng.h"

namespace moesim::traces {

inline constexpr uint32_t kNoExpert = 0xFFFFFFFFu;

struct CpUnit {
  uint32_t a = kNoExpert;
  uint32_t b = kNoExpert;  // kNoExpert for a single
  double wa = 0;           // weight of "a alone"
  double wb = 0;           // weight of "b alone" (pairs)
  double wab = 0;          // weight of "a and b together" (pairs): w_a * w_b * phi_ab
  bool is_pair() const { return b != kNoExpert; }
};

// Units for plain conditional Poisson sampling: one single per expert with w_i > 0 (w_i == 0 experts can
// never be drawn and are left out).
std::vector<CpUnit> single_units(std::span<const double> w);

// Draws subsets of exactly `size` experts from `units`. The table costs O(units x size) to build;
// each draw then costs O(units) and one uniform per unit visited.
class CpSampler {
 public:
  CpSampler() = default;
  // Throws moesim::Error when no subset of that size has positive probability.
  CpSampler(std::vector<CpUnit> units, uint32_t size);
  // Appends the drawn experts to `out` (unit order; callers order them as they need).
  void draw(Rng& rng, std::vector<uint32_t>& out) const;
  uint32_t size() const { return size_; }

 private:
  std::vector<CpUnit> units_;
  uint32_t size_ = 0;
  std::vector<double> suffix_;  // [(units + 1) x (size + 1)], row u = later units u.., rescaled per row
};

// Exact inclusion probabilities of every expert (indexed by expert id, `experts` long) and of every pair
// unit's joint state (indexed like `units`; 0 for singles) for subsets of exactly `size`.
struct CpInclusion {
  std::vector<double> expert;  // P(i in S)
  std::vector<double> pair;    // P(a in S and b in S) for pair units
};
CpInclusion cp_inclusion(std::span<const CpUnit> units, uint32_t size, uint32_t experts);

}  // namespace moesim::traces
