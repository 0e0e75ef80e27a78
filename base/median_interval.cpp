#include "base/median_interval.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moesim {

double median_interval_coverage(size_t n, size_t k) {
  if (k < 1 || 2 * k > n + 1) return 0;
  // P(Bin(n, 1/2) = i) = C(n, i) / 2^n, summed in logs (n up to thousands stays finite).
  const double nd = static_cast<double>(n);
  double below = 0;
  for (size_t i = 0; i < k; ++i) {
    const double id = static_cast<double>(i);
    below += std::exp(std::lgamma(nd + 1) - std::lgamma(id + 1) - std::lgamma(nd - id + 1) - nd * std::log(2.0));
  }
  return std::max(0.0, 1 - 2 * below);
}

MedianInterval median_interval(std::vector<double> xs, double at_least) {
  MedianInterval r;
  if (xs.empty()) {
    r.lo = r.hi = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  size_t k = 1;
  while (median_interval_coverage(n, k + 1) >= at_least) ++k;
  r.k = k;
  r.lo = xs[k - 1];
  r.hi = xs[n - k];
  r.coverage = median_interval_coverage(n, k);
  return r;
}

}  // namespace moesim
