#include "harness/sensitivity_flip.h"

#include <cmath>

#include "base/error.h"

namespace moesim::harness {

namespace {

FlipSide search_side(const std::vector<size_t>& baseline,
                     const std::function<std::optional<std::vector<size_t>>(double)>& ranking_at,
                     double bound, const FlipSearch& s, uint32_t& evaluations) {
  FlipSide side;
  double last = 1;
  for (uint32_t k = 1; k <= s.steps; ++k) {
    const double f = std::pow(bound, static_cast<double>(k) / s.steps);
    ++evaluations;
    const std::optional<std::vector<size_t>> r = ranking_at(f);
    if (!r) {
      side.range_end = f;
      break;
    }
    if (*r == baseline) {
      last = f;
      continue;
    }
    // Bracket [last, f] (in either order): bisect geometrically to the tolerance.
    double same = last, flipped = f;
    std::vector<size_t> flipped_ranking = *r;
    while (std::max(same, flipped) / std::min(same, flipped) > 1 + s.tolerance) {
      const double mid = std::sqrt(same * flipped);
      ++evaluations;
      const std::optional<std::vector<size_t>> m = ranking_at(mid);
      if (m && *m == baseline) {
        same = mid;
      } else if (m) {
        flipped = mid;
        flipped_ranking = *m;
      } else {
        break;  // out of range inside a bracket whose ends were in range: keep what is bracketed
      }
    }
    side.found = true;
    side.factor = flipped;
    side.unflipped = same;
    side.ranking = std::move(flipped_ranking);
    return side;
  }
  side.unflipped = last;
  return side;
}

}  // namespace

FlipResult find_flip(const std::vector<size_t>& baseline,
                     const std::function<std::optional<std::vector<size_t>>(double)>& ranking_at,
                     const FlipSearch& s) {
  if (!(s.lo > 0 && s.lo < 1 && s.hi > 1 && std::isfinite(s.hi)))
    throw UsageError("--range: expected LO,HI with 0 < LO < 1 < HI, e.g. 0.1,10");
  if (!(s.tolerance > 0 && s.tolerance < 1))
    throw UsageError("--tolerance: expected a number in (0, 1), e.g. 0.01");
  if (s.steps == 0) throw UsageError("the flip search needs at least one scan step");
  FlipResult r;
  r.below = search_side(baseline, ranking_at, s.lo, s, r.evaluations);
  r.above = search_side(baseline, ranking_at, s.hi, s, r.evaluations);
  return r;
}

}  // namespace moesim::harness
