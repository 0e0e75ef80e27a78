#include "serving/system.h"

#include <algorithm>

#include "core/error.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "serving/classic_residency.h"
#include "serving/workload.h"

namespace moesim::serving {
namespace {

std::string or_default(const std::string& s, const char* d) { return s.empty() ? std::string(d) : s; }

}  // namespace

const std::vector<std::string>& system_names() {
  static const std::vector<std::string> names{"offload", "layer-offload", "zipmoe"};
  return names;
}

RunResult run(const SystemConfig& cfg, const traces::LookupStream& stream, const traces::TraceInfo& info,
              const SizedCosts& costs, Platform& platform) {
  if (std::find(system_names().begin(), system_names().end(), cfg.system) == system_names().end())
    throw Error("unknown system '" + cfg.system + "' (known: offload, layer-offload, zipmoe)");
  RunResult r;
  PipelineOptions po;
  po.recover_on = cfg.recover_on;
  po.compute_on = cfg.compute_on;
  po.record_timeline = cfg.record_timeline;
  po.timeline_first_step = cfg.timeline_first_step;
  po.timeline_last_step = cfg.timeline_last_step;
  po.on_step = cfg.on_step;
  const MemoryTier tier = cfg.unified_memory ? MemoryTier::kUnified : MemoryTier::kDevice;
  std::unique_ptr<Residency> residency;
  std::string scheduling = or_default(cfg.scheduling, "fcfs");
  if (cfg.system == "offload" || cfg.system == "layer-offload") {
    po.load_whole_layer = cfg.system == "layer-offload";
    CacheConfig cc = make_cache_config(info.layers, info.experts, info.top_k, cfg.scope, cfg.budget,
                                       costs.costs.expert_bytes);
    cc.next_use_available = true;
    const std::vector<uint64_t> freq = key_frequencies(stream.key, cc.keys());
    cc.key_frequency = freq;
    std::optional<CacheConfig> host;
    if (cfg.host_budget_bytes > 0) {
      if (cfg.unified_memory)
        throw Error("a host-memory tier (--host-budget) needs a discrete GPU; this hardware has unified memory");
      host = make_cache_config(info.layers, info.experts, info.top_k, cfg.scope,
                               CacheCapacity{CacheCapacity::Unit::kBytes, cfg.host_budget_bytes},
                               costs.costs.expert_bytes);
      host->next_use_available = true;
      host->key_frequency = freq;
    }
    residency = make_classic_residency(or_default(cfg.eviction, "lru"), cc, tier, host ? &*host : nullptr);
    r.cache_capacity_bytes = cc.total_capacity_bytes();
    r.cache_capacity_experts = cc.total_capacity_experts();
  } else {
    throw Error("--system zipmoe: not available in this build");
  }
  auto routing = make_routing_policy(cfg.routing, RoutingSetup{info.layers, info.experts, info.top_k});
  auto sched = make_scheduling_policy(scheduling);
  auto prefetch = make_prefetch_policy(cfg.prefetch, PrefetchSetup{info.layers, info.experts, info.top_k, cfg.seed});
  Pipeline pipeline(costs.costs, po, *residency, *routing, *sched, prefetch.get());
  r.result = pipeline.run(workload_view(stream), platform);
  r.eviction = residency->name();
  r.routing = RoutingRegistry::instance().params(cfg.routing, "routing").canonical();
  r.scheduling = SchedulingRegistry::instance().params(scheduling, "scheduling").canonical();
  r.prefetch = PrefetchRegistry::instance().params(cfg.prefetch, "prefetch").canonical();
  return r;
}

Json config_json(const SystemConfig& cfg, const RunResult& r, const SizedCosts& costs,
                 const traces::TraceInfo& info, uint32_t batch, const Platform& platform) {
  Json j;
  j["system"] = cfg.system;
  j["eviction"] = r.eviction;
  j["routing"] = r.routing;
  j["scheduling"] = r.scheduling;
  j["prefetch"] = r.prefetch;
  j["budget"] = cfg.budget.to_string();
  // A budget is either bytes or experts per layer; the other key is null (never the number in the wrong
  // unit).
  const bool in_bytes = cfg.budget.unit == CacheCapacity::Unit::kBytes;
  j["budget_bytes"] = in_bytes ? Json(cfg.budget.value) : Json(nullptr);
  j["budget_experts_per_layer"] = in_bytes ? Json(nullptr) : Json(cfg.budget.value);
  j["host_budget_bytes"] = cfg.host_budget_bytes ? Json(cfg.host_budget_bytes) : Json(nullptr);
  j["memory"] = cfg.unified_memory ? "unified" : "discrete";
  j["scope"] = scope_name(cfg.scope);
  j["cache_capacity_experts"] = r.cache_capacity_experts;
  j["cache_capacity_bytes"] = r.cache_capacity_bytes ? Json(r.cache_capacity_bytes) : Json(nullptr);
  j["recover_on"] = resource_class_name(cfg.recover_on);
  j["compute_on"] = resource_class_name(cfg.compute_on);
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
