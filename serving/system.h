// Serving systems assembled from a run configuration and run on any Platform (ARCHITECTURE.md §9): the same
// code runs in simulated time (`moesim run`, sim::SimPlatform) and in real time (exec's platform). Nothing
// here knows which platform it has.
//
// Systems (we model each system's policy in our pipeline, not its codebase):
//   offload        expert-level on-demand offloading: experts live whole on the SSD; an expert cache of
//                  `budget` bytes (or experts per layer) managed by the eviction policy holds the experts read
//                  so far; a missed expert is read whole, made visible to the GPU and computed (MoE-Infinity's
//                  caching without its predictor; llama.cpp-style offloading). On a discrete GPU the cache is
//                  in device memory; `host_budget` adds a DRAM tier behind it (a VRAM miss that hits in DRAM
//                  costs a host-to-device copy, not an SSD read).
//   layer-offload  Accelerate-style: when a layer runs, all of its experts are loaded (those not resident);
//                  with `prefetch layer-window:depth=d` the next d layers load while it computes (DeepSpeed
//                  ZeRO-3 style). The cache is the same expert cache.
//   zipmoe         ZipMoE (§3): experts stored split (SM-chunks + K compressed E-chunk shards), four pools
//                  F/C/S/E sized by the planner (Appendix C) or by `pools`, rank-based dispatch (§3.4), the
//                  per-tensor DAGs of Fig. 6 and the cache-affinity scheduler (Alg. 1). `eviction` replaces
//                  the in-pool eviction for the Fig. 10 ablation (freq = the paper's).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/cache_config.h"
#include "core/json_io.h"
#include "core/pipeline.h"
#include "core/platform.h"
#include "serving/model_costs.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"

namespace moesim::serving {

struct SystemConfig {
  std::string system = "offload";  // offload | layer-offload | zipmoe
  // Eviction policy spec (`moesim policies`); for zipmoe the in-pool eviction: freq (default), lru, fifo,
  // marking. Empty: the system's default (lru; zipmoe: freq).
  std::string eviction;
  std::string routing = "identity";
  // The records behind the stream: every routing policy but identity reads each token's routing from them
  // (traces/token_routing.h). Must outlive run(); null only with identity routing.
  const traces::Trace* trace = nullptr;
  std::string scheduling;  // empty: the system's default (fcfs; zipmoe: zipmoe)
  std::string prefetch = "none";
  CacheScope scope = CacheScope::kGlobal;
  CacheCapacity budget;
  // Memory: UMA (one shared tier) or a discrete GPU (device memory; host_budget_bytes > 0 adds a host tier).
  bool unified_memory = true;
  uint64_t host_budget_bytes = 0;
  ResourceClass recover_on = ResourceClass::kGpu;
  ResourceClass compute_on = ResourceClass::kGpu;
  // ZipMoE.
  uint32_t shards = 4;       // K: E-chunk shards per tensor
  double e_ratio = 0;        // rho; 0 = kDefaultExponentRatio (core/planning.h)
  std::string e_ratio_source;  // where rho came from (for the run header)
  // "F=0.2,C=0.5,S=0.3": fixed ratios; "F,C,S,E" (or empty: all four): the pool set Lambda the planner
  // (ZipMoE Appendix C, Alg. 4) may use.
  std::string pools;
  std::string pool_set = "F,C,S,E";
  double grid = 0.05;        // planner grid step
  uint32_t delta = 0;        // dispatch tolerance (experts)
  uint64_t seed = 1;
  // Timeline and progress (PipelineOptions).
  bool record_timeline = false;
  uint32_t timeline_first_step = 0;
  uint32_t timeline_last_step = UINT32_MAX;
  std::function<void(uint64_t, uint64_t)> on_step;
};

struct RunResult {
  PipelineResult result;
  std::string eviction, routing, scheduling, prefetch;  // canonical names with every parameter
  uint64_t cache_capacity_bytes = 0;
  uint64_t cache_capacity_experts = 0;
  Json plan;  // zipmoe: the pool plan (ratios, experts per layer, bytes, expected makespan); null otherwise
};

// The names of the systems, for option help and errors.
const std::vector<std::string>& system_names();

// Runs the stream (built with the batch size wanted) on `platform` (fresh: times start at its now()).
// Throws moesim::Error for a bad policy spec, an unknown system or a budget that cannot hold one invocation.
RunResult run(const SystemConfig& cfg, const traces::LookupStream& stream, const traces::TraceInfo& info,
              const SizedCosts& costs, Platform& platform);

// The "config" part of a run's JSON (system, policies with parameters, budget, scope, batch, memory tiers,
// platform units, sizes, plan).
Json config_json(const SystemConfig& cfg, const RunResult& r, const SizedCosts& costs,
                 const traces::TraceInfo& info, uint32_t batch, const Platform& platform);

}  // namespace moesim::serving
