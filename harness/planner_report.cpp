#include "harness/planner_report.h"

#include <algorithm>

#include "base/units.h"
#include "harness/arguments.h"

namespace moesim::harness {

Json planner_report(const Json& plan, const Json& metrics) {
  if (plan.is_null()) return Json(nullptr);
  const Json& states = metrics.at("states");
  uint64_t decode = 0, all = 0;
  for (const auto& [state, n] : states.at("decode_lookups").items()) decode += n.get<uint64_t>();
  for (const auto& [state, n] : states.at("lookups").items()) all += n.get<uint64_t>();
  // The profile counts decode invocations (traces/rank_inclusion.h); a run without any counts them all.
  const bool dec = decode > 0;
  const uint64_t lookups = dec ? decode : all;
  const uint64_t misses = states.at(dec ? "decode_lookups" : "lookups").at("M").get<uint64_t>();
  const uint64_t cold = states.at(dec ? "decode_cold_misses" : "cold_misses").get<uint64_t>();
  auto rate = [&](uint64_t n) { return fraction_or_null(n, lookups); };
  const double k = plan.at("k").get<double>();
  const Json& layer = metrics.at(dec ? "layer_makespan_decode" : "layer_makespan");
  Json r;
  // The expectation is k minus the pools' expected hits: rounding can leave it a hair below 0.
  r["expected_miss_rate"] = k > 0 ? Json(std::max(0.0, plan.at("expected_misses").get<double>() / k)) : Json(nullptr);
  r["simulated_miss_rate"] = rate(misses);
  r["simulated_cold_misses"] = cold;
  r["simulated_cold_miss_rate"] = rate(cold);
  r["simulated_warm_miss_rate"] = rate(misses - cold);
  r["expected_layer_s"] = plan.at("expected_makespan_s");
  r["simulated_layer_s"] = layer.at("mean_s");
  r["lookups"] = lookups;
  r["phase"] = dec ? "decode" : "all";
  r["profile"] = plan.value("profile", Json(nullptr));
  return r;
}

std::string planner_report_line(const Json& r) {
  if (r.is_null()) return "";
  auto pct = [](const Json& v) { return v.is_number() ? strprintf("%.2f%%", 100 * v.get<double>()) : std::string("-"); };
  auto sec = [](const Json& v) { return v.is_number() ? format_seconds(v.get<double>()) : std::string("-"); };
  const Json& profile = r["profile"];
  return strprintf("planner:     expected %s misses, %s I/O+decompression per layer; simulated %s misses (%s "
                   "cold-start, %s warm), %s per layer with compute (%s lookups; profile: %s)\n",
                   pct(r["expected_miss_rate"]).c_str(), sec(r["expected_layer_s"]).c_str(),
                   pct(r["simulated_miss_rate"]).c_str(), pct(r["simulated_cold_miss_rate"]).c_str(),
                   pct(r["simulated_warm_miss_rate"]).c_str(), sec(r["simulated_layer_s"]).c_str(),
                   r["phase"].get<std::string>().c_str(),
                   profile.is_object() ? profile.value("source", std::string("?")).c_str() : "?");
}

}  // namespace moesim::harness
