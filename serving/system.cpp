#include "serving/system.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/planning.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "core/units.h"
#include "core/warnings.h"
#include "serving/classic_residency.h"
#include "serving/workload.h"
#include "serving/zipmoe_residency.h"
#include "traces/rank_inclusion.h"
#include "traces/token_routing.h"

namespace moesim::serving {
namespace {

std::string grid_text(double g) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", g);
  return b;
}

std::string or_default(const std::string& s, const char* d) { return s.empty() ? std::string(d) : s; }

// Raises `message` unless this command (or this sweep point) already has: compare, calibrate and validate
// run one configuration several times.
void warn_once(const std::string& message) {
  const std::vector<std::string> raised = warnings();
  if (std::find(raised.begin(), raised.end(), message) == raised.end()) warn(message);
}

// A plan with no expert in any pool runs, but every lookup misses: as doubtful as a budget `moesim plan`
// warns about, so every command that runs a system (run, exec, compare, sweep, calibrate, validate) says so
// here, where they all build it. ZipMoE's pools are per layer and the same for every layer.
void warn_if_nothing_resident(const PoolPlan& plan, const PlanningInput& in, const std::string& given) {
  uint64_t held = 0;
  for (int p = 0; p < kPools; ++p) held += plan.experts[p];
  if (held > 0) return;
  const auto per_expert = pool_expert_bytes(in.expert_bytes, in.layout);
  const uint64_t smallest = *std::min_element(per_expert.begin(), per_expert.end());
  warn_once("--system zipmoe: --budget " + format_bytes(in.budget_bytes) + " leaves each of the " +
            std::to_string(in.layers) + " layers 0 resident experts (" +
            format_bytes(in.budget_bytes / in.layers) + " per layer" +
            (given.empty() ? "" : " split by " + given) + "; the smallest pool entry takes " +
            format_bytes(smallest) + "): every lookup misses and is read from the SSD");
}

// ZipMoE (§3): split tensors, pools planned by Alg. 4 (or given), rank-based dispatch.
std::unique_ptr<Residency> make_zipmoe(const SystemConfig& cfg, const traces::LookupStream& stream,
                                       const traces::TraceInfo& info, const SizedCosts& costs,
                                       const Platform& platform, PipelineOptions& po, RunResult& r) {
  if (cfg.budget.unit != CacheCapacity::Unit::kBytes)
    throw Error("--system zipmoe needs a budget in bytes (its pools are sized in bytes, ZipMoE §3.4), not " +
                cfg.budget.to_string());
  const std::string source = costs.sizes.value("expert_bytes_source", std::string());
  if (source.rfind("trace", 0) == 0)
    throw Error("--system zipmoe splits BF16 tensors into sign-mantissa and exponent bits, but the expert sizes "
                "come from the trace (" + source + "), a quantized file; pass --model to simulate BF16 weights");
  TensorLayout layout;
  layout.compressed = true;
  layout.shards = std::max(cfg.shards, 1u);
  layout.sm_fraction = 0.5;  // sign + 7 mantissa bits of a BF16 element (§3.1)
  layout.e_ratio = cfg.e_ratio > 0 ? cfg.e_ratio : kGaussianBf16ExponentRatio;
  po.layout = layout;
  const std::vector<uint64_t>& eb = costs.costs.expert_bytes;
  if (std::adjacent_find(eb.begin(), eb.end(), std::not_equal_to<>()) != eb.end())
    throw Error("--system zipmoe: the planner needs experts of one size in every layer (ZipMoE plans one layer)");
  const auto tensors = static_cast<uint32_t>(std::max<size_t>(costs.costs.tensor_share.size(), 1));
  traces::RankInclusion f;
  try {
    f = traces::rank_inclusion(stream, traces::InclusionPhase::kDecode);
  } catch (const Error&) {  // e.g. a prefill-only trace
    f = traces::rank_inclusion(stream, traces::InclusionPhase::kAll);
  }
  PlanningInput in;
  in.budget_bytes = cfg.budget.value;
  in.layers = info.layers;
  in.experts = info.experts;
  in.k = f.k;
  in.expert_bytes = eb[0];
  in.layout = layout;
  in.f = f.f;
  in.delays = zipmoe_plan_delays(platform, costs.costs.tensor_bytes(0, 0), layout,
                                 platform.units(ResourceClass::kCpu), tensors);
  in.grid = cfg.grid;
  const PoolsOption pools = parse_pools_option(cfg.pools.empty() ? cfg.pool_set : cfg.pools, "--pools");
  in.pools = pools.set;
  PoolPlan plan;
  Json runners = Json::array();
  if (pools.ratios) {
    plan = zipmoe_evaluate(in, *pools.ratios);
  } else {
    const PlanResult pr = zipmoe_plan(in);
    plan = pr.best;
    for (const auto& ru : pr.runners_up) runners.push_back(pool_plan_json(ru));
  }
  warn_if_nothing_resident(plan, in, cfg.pools.empty() ? "" : "--pools " + cfg.pools);
  r.plan = pool_plan_json(plan);
  r.plan["source"] = pools.ratios ? "--pools" : "planned (ZipMoE Alg. 4, grid " + grid_text(cfg.grid) + ")";
  r.plan["pool_set"] = in.pools.str();
  r.plan["runners_up"] = runners;
  r.plan["k"] = f.k;
  r.plan["inclusion_source"] = f.source;
  r.plan["rho"] = layout.e_ratio;
  r.plan["rho_source"] = cfg.e_ratio > 0 ? or_default(cfg.e_ratio_source, "given")
                                          : std::string(kGaussianBf16ExponentRatioSource);
  r.plan["shards"] = layout.shards;
  r.plan["delays"] = Json{{"u_s", in.delays.u}, {"v_s", in.delays.v}, {"c_s", in.delays.c},
                          {"L", in.delays.L}, {"K", in.delays.K}, {"n", in.delays.n}};
  uint64_t experts_held = 0, bytes_held = 0;
  for (int p = 0; p < kPools; ++p) {
    experts_held += uint64_t{plan.experts[p]} * info.layers;
    bytes_held += uint64_t{plan.experts[p]} * plan.expert_bytes[p] * info.layers;
  }
  r.cache_capacity_experts = experts_held;
  r.cache_capacity_bytes = bytes_held;
  ZipMoePoolsConfig zc;
  zc.layers = info.layers;
  zc.experts = info.experts;
  for (int p = 0; p < kPools; ++p) {
    zc.capacity[p] = plan.experts[p];
    zc.expert_bytes[p] = plan.expert_bytes[p];
    // Full tensors live where the GPU computes; chunks in host memory (shared memory on UMA devices).
    zc.tier[p] = cfg.unified_memory ? MemoryTier::kUnified : (p == 0 ? MemoryTier::kDevice : MemoryTier::kHost);
  }
  zc.delta = cfg.delta;
  zc.evict = or_default(cfg.eviction, "freq");
  zc.seed = cfg.seed;
  return make_zipmoe_residency(zc);
}

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
    residency = make_zipmoe(cfg, stream, info, costs, platform, po, r);
    scheduling = or_default(cfg.scheduling, "zipmoe");
  }
  RoutingSetup rs{info.layers, info.experts, info.top_k, false, false};
  if (cfg.trace) rs = traces::routing_setup(info, *cfg.trace);
  auto routing = make_routing_policy(cfg.routing, rs);
  traces::TokenRouting tokens;
  WorkloadView view = workload_view(stream);
  if (!routing->identity()) {
    if (!cfg.trace)
      throw Error("routing '" + cfg.routing + "' needs each token's routing: this run was given no trace records");
    tokens = traces::build_token_routing(*cfg.trace, stream);
    view.routing = traces::token_routing_view(tokens, *cfg.trace);
  }
  auto sched = make_scheduling_policy(scheduling);
  auto prefetch = make_prefetch_policy(cfg.prefetch, PrefetchSetup{info.layers, info.experts, info.top_k, cfg.seed});
  Pipeline pipeline(costs.costs, po, *residency, *routing, *sched, prefetch.get());
  r.result = pipeline.run(view, platform);
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
  // ZipMoE plans and dispatches per sparse layer (§3.4, Appendix C), whatever --scope says.
  j["scope"] = cfg.system == "zipmoe" ? "layer" : scope_name(cfg.scope);
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
