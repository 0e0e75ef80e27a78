#include "base/distribution.h"

#include <algorithm>
#include <cmath>

namespace moesim {

double percentile_nearest_rank(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Distribution summarize(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.count = v.size();
  double sum = 0;
  for (double x : v) sum += x;  // sorted order: a fixed summation order
  d.mean = sum / static_cast<double>(v.size());
  d.p50 = percentile_nearest_rank(v, 50);
  d.p90 = percentile_nearest_rank(v, 90);
  d.p99 = percentile_nearest_rank(v, 99);
  d.max = v.back();
  return d;
}

Json to_json(const Distribution& d) {
  Json j;
  j["count"] = d.count;
  if (d.count == 0) {  // not measured (e.g. TTFT without prefill): null, never a fake 0
    for (const char* k : {"mean_s", "p50_s", "p90_s", "p99_s", "max_s"}) j[k] = nullptr;
    return j;
  }
  j["mean_s"] = d.mean;
  j["p50_s"] = d.p50;
  j["p90_s"] = d.p90;
  j["p99_s"] = d.p99;
  j["max_s"] = d.max;
  return j;
}

}  // namespace moesim
