#include "harness/cluster/call_overhead_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "base/sample_stats.h"

namespace moesim::harness {

std::pair<double, double> least_squares_line(const std::vector<std::pair<double, double>>& points) {
  if (points.empty()) return {0.0, 0.0};
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const auto n = static_cast<double>(points.size());
  if (!(n * sxx - sx * sx > 0)) return {sy / n, 0.0};
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return {(sy - slope * sx) / n, slope};
}

CallOverheadLine fit_call_overhead(const std::vector<std::pair<double, double>>& points) {
  std::vector<double> lone;
  for (const auto& [x, y] : points)
    if (x == 0) lone.push_back(y);
  double fixed = 0, slope = 0;
  if (!lone.empty()) {
    fixed = median_of(lone);
    double ax = 0, axy = 0;
    for (const auto& [x, y] : points) {
      axy += x * (y - fixed);
      ax += x * x;
    }
    slope = ax > 0 ? axy / ax : 0.0;
  } else {
    std::tie(fixed, slope) = least_squares_line(points);
  }
  return {std::max(fixed, 0.0), std::max(slope, 0.0)};
}

CallOverheadLine fit_call_overhead_bursts(const std::vector<std::pair<uint32_t, double>>& calls) {
  std::map<uint32_t, std::vector<double>> by_size;
  for (const auto& [k, y] : calls) by_size[k].push_back(y);
  std::vector<std::pair<double, double>> means;
  for (const auto& [k, ys] : by_size) {
    const double cap = kStallOverMedian * median_of(ys);
    double sum = 0, n = 0;
    for (double y : ys)
      if (y <= cap) {
        sum += y;
        n += 1;
      }
    means.emplace_back((static_cast<double>(k) - 1) / 2, n > 0 ? sum / n : 0);
  }
  const auto [fixed, slope] = least_squares_line(means);
  return {std::max(fixed, 0.0), std::max(slope, 0.0)};
}

CallOverheadLine fit_call_overhead_led(const std::vector<double>& lead_s, const CallOverheadLine& bursts) {
  if (lead_s.empty()) return bursts;
  return {std::max(median_of(lead_s), 0.0), std::max(bursts.per_inflight, 0.0)};
}

CallOverheadLine fit_call_overhead_total(const std::vector<std::pair<double, double>>& points) {
  std::vector<double> lone;
  double sx = 0, sy = 0;
  for (const auto& [x, y] : points) {
    if (x == 0) lone.push_back(y);
    sx += x;
    sy += y;
  }
  if (lone.empty()) return fit_call_overhead(points);
  const double fixed = std::max(median_of(lone), 0.0);
  const double n = static_cast<double>(points.size());
  return {fixed, sx > 0 ? std::max((sy - n * fixed) / sx, 0.0) : 0.0};
}

std::map<int, double> call_overhead_medians(const std::vector<std::pair<double, double>>& points) {
  std::map<int, std::vector<double>> at;
  for (const auto& [x, y] : points) at[static_cast<int>(std::lround(x))].push_back(y);
  std::map<int, double> out;
  for (const auto& [x, ys] : at) out[x] = median_of(ys);
  return out;
}

}  // namespace moesim::harness
