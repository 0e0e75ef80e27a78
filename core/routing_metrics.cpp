#include "core/routing_metrics.h"

#include <algorithm>
#include <cmath>

#include "core/routing.h"

namespace moesim {

void RoutingDeviation::add(const InvocationTokens& tokens, std::span<const uint16_t> out) {
  const uint32_t k = tokens.top_k();
  if (rank_hist.size() < k) rank_hist.resize(k, 0);
  if (mass_hist.empty()) mass_hist.assign(kMassBins + 1, 0);
  if (!tokens.has_weights() && !tokens.has_logits()) mass_known = false;
  for (uint32_t t = 0; t < tokens.size(); ++t) {
    const auto ids = tokens.ids(t);
    const auto o = out.subspan(size_t{t} * k, k);
    ++selections;
    bool any = false;
    double removed_w = 0, total_w = 0;
    const auto w = tokens.weights(t);
    const auto z = tokens.logits(t);
    double zmax = 0;
    if (w.empty() && !z.empty()) {
      zmax = z[ids[0]];
      for (uint32_t r = 0; r < k; ++r) zmax = std::max(zmax, static_cast<double>(z[ids[r]]));
    }
    for (uint32_t r = 0; r < k; ++r) {
      const double wr = !w.empty() ? static_cast<double>(w[r]) : !z.empty() ? std::exp(z[ids[r]] - zmax) : 0.0;
      total_w += wr;
      if (std::find(o.begin(), o.end(), ids[r]) != o.end()) continue;
      any = true;
      ++removed;
      ++rank_hist[r];
      removed_w += wr;
    }
    for (uint32_t s = 0; s < k; ++s) dropped += o[s] == kNoExpert;
    if (!any) {
      ++mass_hist[0];
      continue;
    }
    ++changed;
    const double m = total_w > 0 ? removed_w / total_w : 0.0;
    mass_sum += m;
    ++mass_hist[static_cast<size_t>(std::clamp(m, 0.0, 1.0) * kMassBins)];
  }
}

void RoutingDeviation::merge(const RoutingDeviation& o) {
  selections += o.selections;
  changed += o.changed;
  removed += o.removed;
  dropped += o.dropped;
  mass_known = mass_known && o.mass_known;
  mass_sum += o.mass_sum;
  if (rank_hist.size() < o.rank_hist.size()) rank_hist.resize(o.rank_hist.size(), 0);
  for (size_t i = 0; i < o.rank_hist.size(); ++i) rank_hist[i] += o.rank_hist[i];
  if (mass_hist.empty()) mass_hist.assign(kMassBins + 1, 0);
  for (size_t i = 0; i < o.mass_hist.size(); ++i) mass_hist[i] += o.mass_hist[i];
}

double RoutingDeviation::mass_p95() const {
  if (selections == 0 || mass_hist.empty()) return 0.0;
  const auto need = static_cast<uint64_t>(std::ceil(0.95 * static_cast<double>(selections)));
  uint64_t seen = 0;
  for (size_t b = 0; b < mass_hist.size(); ++b) {
    seen += mass_hist[b];
    if (seen >= need) return b == 0 ? 0.0 : std::min(1.0, (static_cast<double>(b) + 1) / kMassBins);
  }
  return 1.0;
}

Json RoutingDeviation::to_json() const {
  Json j;
  j["selections"] = selections;
  j["changed"] = changed;
  j["changed_fraction"] = changed_fraction();
  j["removed_experts"] = removed;
  j["dropped_experts"] = dropped;
  if (mass_known) {
    j["mass_replaced_mean"] = mass_mean();
    j["mass_replaced_p95"] = mass_p95();
    j["mass_replaced_mean_changed"] = changed ? mass_sum / static_cast<double>(changed) : 0.0;
  } else {
    j["mass_replaced_mean"] = nullptr;
    j["mass_replaced_p95"] = nullptr;
    j["mass_replaced_mean_changed"] = nullptr;
  }
  j["removed_rank_histogram"] = rank_hist;
  return j;
}

Json LifetimeStats::to_json() const {
  Json j;
  j["residencies"] = count;
  j["censored"] = censored;
  j["mean_tokens"] = count ? Json(mean) : Json(nullptr);
  j["sd_tokens"] = count ? Json(sd()) : Json(nullptr);
  return j;
}

}  // namespace moesim
