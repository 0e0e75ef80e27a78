// A distribution-free confidence interval for the median of n independent samples, from their order
// statistics: [x_(k), x_(n+1-k)] (1-based, sorted) holds the population median with probability
// 1 - 2 P(Bin(n, 1/2) <= k - 1), whatever the distribution. `moesim validate --repeat N` puts one around the
// exec runs' median TPOT, so that a cost error is read against the noise of the runs it is measured on.
#pragma once

#include <cstddef>
#include <vector>

namespace moesim {

struct MedianInterval {
  double lo = 0, hi = 0;  // x_(k) and x_(n+1-k); NaN for no samples
  double coverage = 0;    // the probability that [lo, hi] holds the median
  size_t k = 0;           // the order statistic used (1: min and max)
};

// The narrowest such interval with coverage >= `at_least` (0 < at_least < 1); where even [min, max] falls
// short (n < 5 at 0.9), [min, max] with its own coverage, 1 - 2^(1-n).
MedianInterval median_interval(std::vector<double> xs, double at_least = 0.9);

// 1 - 2 P(Bin(n, 1/2) <= k - 1): the coverage of [x_(k), x_(n+1-k)]; 0 unless 1 <= k <= (n + 1) / 2.
double median_interval_coverage(size_t n, size_t k);

}  // namespace moesim
