// The break-even search of `moesim sensitivity --find-flip`: the factor, on each side of 1, at which scaling
// one input (a profile field or a run parameter) changes the ranking of a point's systems.
//
//   for each side (down to lo, up to hi):
//     scan   f_k = bound^(k/steps), k = 1..steps (geometric, so 0.1..10 is as fine below 1 as above)
//            until ranking_at(f_k) differs from the baseline's (or the input leaves its range: the side ends
//            there, `range_end` set, no flip)
//     bisect between the last unflipped factor and f_k, at geometric midpoints, until they differ by at most
//            a factor of 1 + tolerance; `factor` is the flipped end, `unflipped` the other
//   no flip on a side: "no flip in [lo, 1]" (or [1, hi]) at the scan's resolution
//
// The scan samples; a ranking that flips and flips back between two samples is missed (the report states the
// scan's steps). Each ranking_at call is one evaluation of every system of the point.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace moesim::harness {

struct FlipSearch {
  double lo = 0.1, hi = 10;  // the factors searched, lo < 1 < hi
  double tolerance = 0.01;   // relative width of the final bracket
  uint32_t steps = 8;        // scan samples per side
};

struct FlipSide {
  bool found = false;
  double factor = 0;                // found: the flipped end of the final bracket
  double unflipped = 1;             // the last factor with the baseline's ranking
  std::vector<size_t> ranking;      // found: the ranking at `factor`
  std::optional<double> range_end;  // the input's range ended the scan beyond `unflipped`
};

struct FlipResult {
  FlipSide below, above;
  uint32_t evaluations = 0;
};

// ranking_at(factor): the systems' ranking with the input scaled by factor, nullopt when the factor takes it
// out of its range. Throws moesim::UsageError for a bad search (lo >= 1, hi <= 1, tolerance <= 0).
FlipResult find_flip(const std::vector<size_t>& baseline,
                     const std::function<std::optional<std::vector<size_t>>(double)>& ranking_at,
                     const FlipSearch& search);

}  // namespace moesim::harness
