#include "serving/metrics.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace moesim {


namespace {
// null, not 0, when nothing was measured (no lookups, no decode time): docs/cli-json.md.
Json rate(double count, double seconds) {
  return seconds > 0 ? Json(count / seconds) : Json(nullptr);
}
}  // namespace

Json metrics_json(const PipelineResult& r) {
  std::vector<double> ttft, tpot, e2e, layer_all, layer_decode;
  double decode_time = 0;
  uint64_t generated = 0, decode_tokens = 0;
  for (const StepTiming& s : r.steps) {
    const double dur = s.end - s.start;
    if (s.phase == 0) {
      generated += 1;
    } else {
      tpot.push_back(dur);
      decode_time += dur;
      generated += s.tokens;
      decode_tokens += s.tokens;
    }
  }
  for (size_t i = 0; i < r.sequences.size(); ++i) {
    const SequenceSteps& q = r.sequences[i];
    if (q.first > q.last || q.last >= r.steps.size())
      throw Error("metrics: sequence " + std::to_string(i) + " spans steps the run does not have");
    const StepTiming &first = r.steps[q.first], &last = r.steps[q.last];
    e2e.push_back(last.end - first.start);
    if (first.phase == 0) ttft.push_back(first.end - first.start);
  }
  for (const auto& inv : r.invocations) {
    layer_all.push_back(inv.end - inv.start);
    if (inv.phase == 1) layer_decode.push_back(inv.end - inv.start);
  }

  Json m;
  m["makespan_s"] = r.makespan;
  m["steps"] = r.steps.size();
  m["generated_tokens"] = generated;
  m["tokens_per_s"] = rate(static_cast<double>(generated), r.makespan);
  m["decode_tokens_per_s"] = rate(static_cast<double>(decode_tokens), decode_time);
  m["ttft"] = to_json(summarize(ttft));
  m["tpot"] = to_json(summarize(tpot));
  m["end_to_end"] = to_json(summarize(e2e));
  m["layer_makespan"] = to_json(summarize(layer_all));
  m["layer_makespan_decode"] = to_json(summarize(layer_decode));
  m["cache"] = cache_counters_json(r.cache, true);
  Json routing;
  routing["lookups"] = r.routing.lookups;
  routing["changed_lookups"] = r.routing.changed_lookups;
  routing["changed_tokens"] = r.routing.changed_tokens;
  m["routing_rewrite"] = routing;
  m["routing_deviation"] = r.deviation.to_json();
  m["routing_policy_counters"] = r.routing_counters;
  m["cache_lifetime"] = r.lifetime.to_json();
  m["ssd_bytes_read"] = r.ssd_bytes;
  Json by_part;
  by_part["whole"] = r.ssd_bytes_by_part[static_cast<size_t>(TensorPart::kWhole)];
  by_part["sm"] = r.ssd_bytes_by_part[static_cast<size_t>(TensorPart::kSm)];
  by_part["e"] = r.ssd_bytes_by_part[static_cast<size_t>(TensorPart::kE)];
  m["ssd_bytes_read_by_component"] = by_part;
  // Lookups by the state they found (ZipMoE §3.2): F, C, S, E, M; a classic cache only has F and M.
  Json states, dstates;
  for (ExpertState st : {ExpertState::kFull, ExpertState::kCompressed, ExpertState::kSM, ExpertState::kE,
                         ExpertState::kMissed}) {
    states[expert_state_name(st)] = r.states.lookups[static_cast<size_t>(st)];
    dstates[expert_state_name(st)] = r.states.decode_lookups[static_cast<size_t>(st)];
  }
  Json sj;
  sj["lookups"] = states;
  sj["decode_lookups"] = dstates;
  sj["host_hits"] = r.states.host_hits;
  sj["in_flight"] = r.states.in_flight;
  sj["cold_misses"] = r.states.cold_misses;
  sj["decode_cold_misses"] = r.states.decode_cold_misses;
  m["states"] = sj;
  m["prefetch"] = prefetch_counters_json(r.prefetch, r.cache.lookups, true);
  Json pools = Json::array();
  for (const auto& pu : r.pools) {
    Json q;
    q["name"] = pu.info.name;
    q["tier"] = memory_tier_name(pu.info.tier);
    q["capacity_bytes"] = pu.info.capacity_bytes ? Json(pu.info.capacity_bytes) : Json(nullptr);
    q["peak_bytes"] = pu.peak_bytes;
    q["final_bytes"] = pu.final_bytes;
    q["admits"] = pu.admits;
    q["evicts"] = pu.evicts;
    q["demotes"] = pu.demotes;
    q["promotes"] = pu.promotes;
    pools.push_back(q);
  }
  m["pools"] = pools;
  m["memory_peak"] = r.memory_peak;  // bytes all pools held together at most
  m["ops"] = r.ops;
  Json util = Json::object();
  for (const auto& res : r.resources) {
    Json u;
    u["units"] = res.units;
    u["busy_s"] = res.busy_time;
    u["utilization"] = r.makespan > 0 ? res.busy_time / (res.units * r.makespan) : 0.0;
    u["ops"] = res.ops;
    u["bytes"] = res.bytes;
    util[res.name] = u;
  }
  m["resources"] = util;
  return m;
}

}  // namespace moesim
