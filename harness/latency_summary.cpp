#include "harness/latency_summary.h"

#include <algorithm>

namespace moesim::harness {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

LatencySummary latency_summary_of(const PipelineResult& r) {
  LatencySummary f;
  std::vector<double> tpot, ttft, layer;
  for (const auto& s : r.steps) (s.phase == 1 ? tpot : ttft).push_back(s.end - s.start);
  for (const auto& v : r.invocations) layer.push_back(v.end - v.start);
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / static_cast<double>(v.size());
  };
  f.tpot = mean(tpot);
  f.ttft = mean(ttft);
  f.layer_median = quantile(layer, 0.5);
  f.layer_p95 = quantile(layer, 0.95);
  return f;
}

std::string plan_ratios(const Json& plan) {
  return plan.is_object() ? plan.value("ratios", std::string()) : std::string();
}

std::string op_kind_label(const Op& op) {
  std::string k = op_kind_name(op.kind);
  if (op.kind == OpKind::kSsdRead) k += std::string(" ") + tensor_part_name(op.part);
  if (op.fused_read()) k += " + read e";  // a worker's own E-chunk read and its decompression
  return k;
}

}  // namespace moesim::harness
