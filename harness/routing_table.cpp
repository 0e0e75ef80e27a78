#include "harness/routing_table.h"

#include <algorithm>

#include "core/routing.h"
#include "harness/arguments.h"

namespace moesim::harness {
namespace {

bool starts_with_routing_name(const std::string& s) {
  for (const auto& e : RoutingRegistry::instance().entries()) {
    if (s.compare(0, e.name.size(), e.name) != 0) continue;
    if (s.size() == e.name.size() || s[e.name.size()] == ':') return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> split_routing_list(const std::vector<std::string>& values) {
  std::vector<std::string> out = split_spec_list(values, starts_with_routing_name);
  for (const auto& r : out) routing_canonical_name(r);
  return out;
}

std::string routing_label(const std::string& canonical) {
  return RoutingRegistry::instance().entry(canonical, "routing").traits.no_op ? "original" : canonical;
}

std::string routing_replay_table(const std::vector<replay::RoutingReplayResult>& rs,
                                 const traces::TraceInfo& info, CacheScope scope) {
  const std::string model = info.model + (info.synthetic ? " (SYNTHETIC)" : "");
  const int mw = static_cast<int>(std::max<size_t>(model.size(), 5));
  size_t rw_ = 7;
  for (const auto& r : rs) rw_ = std::max(rw_, routing_label(r.routing).size());
  const int rw = static_cast<int>(rw_);
  std::string s =
      strprintf("%-*s %-13s %-22s %-*s %-18s %9s %9s %8s %15s\n", mw, "model", "cache size", "eviction", rw,
                "routing", "lifetime (tokens)", "miss", "dec.miss", "changed", "mass mean/p95");
  for (const auto& r : rs) {
    const uint64_t total = uint64_t{info.experts} * (scope == CacheScope::kGlobal ? info.layers : 1);
    const uint64_t cap = scope == CacheScope::kGlobal ? r.replay.capacity_experts
                                                      : r.replay.capacity_experts / std::max(1u, info.layers);
    const std::string size = strprintf("%llu / %llu", static_cast<unsigned long long>(cap),
                                       static_cast<unsigned long long>(total));
    const std::string life =
        r.lifetime.count ? strprintf("%.0f (± %.0f)", r.lifetime.mean, r.lifetime.sd()) : "-";
    std::string ev = r.replay.policy;
    if (r.oracle && !r.converged) ev += strprintf(" [%u passes, open]", r.passes);
    const auto& d = r.deviation;
    const std::string mass = d.selections == 0 ? "-"
                             : d.mass_known    ? strprintf("%.3f/%.3f", d.mass_mean(), d.mass_p95())
                                               : "n/a";
    s += strprintf("%-*s %-13s %-22s %-*s %-18s %8.2f%% %8.2f%% %7.2f%% %15s\n", mw, model.c_str(),
                   size.c_str(), ev.c_str(), rw, routing_label(r.routing).c_str(), life.c_str(), r.miss_pct,
                   r.decode_miss_pct, 100.0 * d.changed_fraction(), mass.c_str());
  }
  s +=
      "miss = misses / the router's lookups; lifetime = mean (± sd) tokens an expert stays resident (evicted "
      "residencies; " +
      std::string(
          "still resident at the end: censored); changed = (token, layer) selections whose experts "
          "changed\n");
  return s;
}

}  // namespace moesim::harness
