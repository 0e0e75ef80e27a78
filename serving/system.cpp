#include "serving/system.h"

#include <algorithm>

#include "base/error.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "serving/workload_view.h"
#include "traces/token_routing.h"

namespace moesim::serving {
namespace {

const SystemRegistry::Entry& entry_of(const PolicySpec& spec) {
  for (const auto& e : SystemRegistry::instance().entries())
    if (e.name == spec.name) return e;
  throw UsageError("unknown system '" + printable(spec.name) +
                   "' (known: " + SystemRegistry::instance().names() + ")");
}

// The names of the systems whose traits have `trait`, comma-separated.
std::string systems_where(bool (*trait)(const SystemTraits&)) {
  std::string s;
  for (const auto& e : SystemRegistry::instance().entries())
    if (trait(e.traits)) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

}  // namespace

std::string systems_with_host_tier() {
  return systems_where([](const SystemTraits& t) { return t.host_tier; });
}

std::string systems_with_planner() {
  return systems_where([](const SystemTraits& t) { return t.plans_pools(); });
}

std::vector<std::string> system_names() {
  std::vector<std::string> names;
  for (const auto& e : SystemRegistry::instance().entries()) names.push_back(e.name);
  return names;
}

PolicySpec parse_system_spec(const std::string& text) {
  PolicySpec spec = PolicySpec::parse(text);
  (void)entry_of(spec);
  return spec;
}

std::unique_ptr<System> make_system(const PolicySpec& spec) {
  const SystemRegistry::Entry& e = entry_of(spec);
  try {
    return e.factory(Params(spec, e.params));
  } catch (const UsageError&) {
    throw;
  } catch (const Error& err) {  // a factory's own refusal of a value
    throw UsageError(std::string("system ") + err.what());
  }
}

const SystemTraits& system_traits(const PolicySpec& spec) {
  return entry_of(spec).traits;
}

bool system_declares(const PolicySpec& spec, const std::string& key) {
  const auto& params = entry_of(spec).params;
  return std::any_of(params.begin(), params.end(), [&](const ParamDef& d) { return d.key == key; });
}

std::string systems_declaring(const std::string& key) {
  std::string s;
  for (const auto& e : SystemRegistry::instance().entries())
    if (std::any_of(e.params.begin(), e.params.end(), [&](const ParamDef& d) { return d.key == key; }))
      s += (s.empty() ? "" : " or ") + e.name;
  return s;
}

PolicySpec with_system_param(PolicySpec spec, const std::string& key, std::string value,
                             const std::string& flag, bool replace) {
  std::replace(value.begin(), value.end(), ',', '+');
  bool found = false;
  for (auto& [k, v] : spec.values)
    if (k == key) {
      if (!replace)
        throw UsageError(flag + " and the system spec's " + key + "=" + v + " both set " + key +
                         ": pass one");
      v = value;
      found = true;
    }
  if (!found) spec.values.emplace_back(key, value);
  return spec;
}

RunResult run(const SystemConfig& cfg, const traces::LookupStream& stream, const traces::TraceInfo& info,
              const SourcedCosts& costs, Platform& platform) {
  const std::unique_ptr<System> system = make_system(cfg.system);
  const SystemTraits& traits = system_traits(cfg.system);
  RunResult r;
  PipelineOptions po;
  po.recover_on = cfg.recover_on;
  po.compute_on = cfg.compute_on;
  po.compute_after_loads = cfg.compute_after_loads;
  po.record_timeline = cfg.record_timeline;
  po.timeline_first_step = cfg.timeline_first_step;
  po.timeline_last_step = cfg.timeline_last_step;
  po.on_step = cfg.on_step;
  if (cfg.host_budget_bytes > 0 && !traits.host_tier)
    throw Error("a host-memory tier (--host-budget) applies to a system with one (" +
                systems_with_host_tier() + "), not " + cfg.system.name);
  const std::unique_ptr<Residency> residency =
      system->build(SystemBuildContext{cfg, stream, info, costs, platform},
                    cfg.eviction.name.empty() ? PolicySpec::parse(traits.eviction) : cfg.eviction, po, r);
  const PolicySpec scheduling =
      cfg.scheduling.name.empty() ? PolicySpec::parse(traits.scheduling) : cfg.scheduling;
  RoutingSetup rs{info.layers, info.experts, info.top_k, false, false};
  if (cfg.trace) rs = traces::routing_setup(info, *cfg.trace);
  auto routing = RoutingRegistry::instance().create(cfg.routing, "routing", rs);
  traces::TokenRouting tokens;
  WorkloadView view = workload_view(stream);
  if (!routing->identity()) {
    if (!cfg.trace)
      throw Error("routing '" + cfg.routing.text() +
                  "' needs each token's routing: this run was given no trace records");
    tokens = traces::build_token_routing(*cfg.trace, stream);
    view.routing = traces::token_routing_view(tokens, *cfg.trace);
  }
  auto sched = SchedulingRegistry::instance().create(scheduling, "scheduling");
  auto prefetch = PrefetchRegistry::instance().create(
      cfg.prefetch, "prefetch", PrefetchSetup{info.layers, info.experts, info.top_k, cfg.seed});
  if (cfg.warm_stream) {
    if (!routing->identity())
      throw Error("a warm start (" + cfg.warm_source + ") runs with identity routing only, not '" +
                  cfg.routing.text() + "'");
    // One progress count over both passes, increasing (a ProgressObserver needs it so).
    const uint64_t warm_steps = cfg.warm_stream->steps(), total = warm_steps + stream.steps();
    bool warming = true;
    if (cfg.on_step)
      po.on_step = [&warming, warm_steps, total, f = cfg.on_step](uint64_t done, uint64_t) {
        f(warming ? done : warm_steps + done, total);
      };
    Pipeline pipeline(costs.costs, po, *residency, *routing, *sched, prefetch.get());
    const WorkloadView warm = workload_view(*cfg.warm_stream);
    (void)pipeline.run(warm, platform);
    warming = false;
    platform.restart_counters();
    const CacheCounters before = residency->counters();
    const std::vector<ResourceStats> busy = platform.resource_stats();
    r.result = pipeline.run(view, platform);
    CacheCounters& c = r.result.cache;
    c.invocations -= before.invocations;
    c.lookups -= before.lookups;
    c.hits -= before.hits;
    c.decode_lookups -= before.decode_lookups;
    c.decode_hits -= before.decode_hits;
    c.read_bytes -= before.read_bytes;
    c.evictions -= before.evictions;
    c.over_capacity_invocations -= before.over_capacity_invocations;
    for (size_t i = 0; i < r.result.resources.size() && i < busy.size(); ++i) {
      r.result.resources[i].busy_time -= busy[i].busy_time;
      r.result.resources[i].ops -= busy[i].ops;
      r.result.resources[i].bytes -= busy[i].bytes;
    }
  } else {
    Pipeline pipeline(costs.costs, po, *residency, *routing, *sched, prefetch.get());
    r.result = pipeline.run(view, platform);
  }
  r.eviction = residency->name();
  r.routing = RoutingRegistry::instance().params(cfg.routing, "routing").canonical();
  r.scheduling = SchedulingRegistry::instance().params(scheduling, "scheduling").canonical();
  r.prefetch = PrefetchRegistry::instance().params(cfg.prefetch, "prefetch").canonical();
  return r;
}

Json config_json(const SystemConfig& cfg, const RunResult& r, const SourcedCosts& costs,
                 const traces::TraceInfo& info, uint32_t batch, const Platform& platform) {
  Json j;
  j["system"] = cfg.system.name;
  j["eviction"] = r.eviction;
  j["routing"] = r.routing;
  j["scheduling"] = r.scheduling;
  j["prefetch"] = r.prefetch;
  j["budget"] = cfg.budget.to_string();
  j["warm"] = cfg.warm_stream ? Json(cfg.warm_source) : Json(nullptr);
  // A budget is either bytes or experts per layer; the other key is null (never the number in the wrong
  // unit).
  const bool in_bytes = cfg.budget.unit == CacheCapacity::Unit::kBytes;
  j["budget_bytes"] = in_bytes ? Json(cfg.budget.value) : Json(nullptr);
  j["budget_experts_per_layer"] = in_bytes ? Json(nullptr) : Json(cfg.budget.value);
  j["host_budget_bytes"] = cfg.host_budget_bytes ? Json(cfg.host_budget_bytes) : Json(nullptr);
  j["memory"] = cfg.unified_memory ? "unified" : "discrete";
  // Pooled systems (ZipMoE, §3.4, Appendix C) plan and dispatch per sparse layer, whatever --scope says.
  j["scope"] = system_traits(cfg.system).per_layer_scope ? "layer" : scope_name(cfg.scope);
  j["cache_capacity_experts"] = r.cache_capacity_experts;
  j["cache_capacity_bytes"] = r.cache_capacity_bytes ? Json(r.cache_capacity_bytes) : Json(nullptr);
  j["recover_on"] = resource_class_name(cfg.recover_on);
  j["compute_on"] = resource_class_name(cfg.compute_on);
  if (cfg.compute_after_loads)
    j["compute_after_loads"] = true;  // absent: overlapped (older outputs unchanged)
  j["batch"] = batch;
  j["platform"] = platform.describe();
  j["io_depth"] = platform.units(ResourceClass::kSsd);
  j["cpu_workers"] = platform.units(ResourceClass::kCpu);
  j["gpu_streams"] = platform.units(ResourceClass::kGpu);
  j["trace_model"] = info.model;
  j["synthetic"] = info.synthetic;
  j["layers"] = info.layers;
  j["experts"] = info.experts;
  j["top_k"] = info.top_k;
  j["seed"] = cfg.seed;
  j["sizes"] = costs.sizes;
  j["plan"] = r.plan;
  return j;
}

}  // namespace moesim::serving
