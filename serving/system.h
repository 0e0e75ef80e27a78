// Serving systems assembled from a run configuration and run on any Platform (docs/architecture.md): the
// same code runs in simulated time (`moesim run`, sim::SimPlatform) and in real time (exec's platform).
// Nothing here knows which platform it has.
//
// A system is a plug-in (SystemRegistry, one file per system in serving/systems/, registered with
// MOESIM_REGISTER like every policy): its entry declares its parameters (policy spec syntax,
// `zipmoe:delta=1,shards=4`), its traits (default eviction and scheduler, planner, scope, host tier) and
// builds the residency of a run. `moesim policies` lists them. Nothing outside serving/systems/ compares a
// system's name: callers ask its traits.
//
// Systems (we model each system's policy in our pipeline, not its codebase):
//   offload        expert-level on-demand offloading (serving/systems/offload_system.cpp)
//   layer-offload  Accelerate-style whole-layer loading (serving/systems/layer_offload_system.cpp)
//   zipmoe         ZipMoE's compressed pools, planner and scheduler (serving/systems/zipmoe_system.cpp)
//   no-cache       every lookup misses: the floor every cache is measured against
//                  (serving/systems/no_cache_system.cpp)
//   prism          Prism's edge cluster: a cluster system (serving/cluster_serving.h), run by `moesim
//   cluster`
//                  on a ClusterPlatform (serving/systems/prism_system.cpp)
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/cache_config.h"
#include "core/platform.h"
#include "core/registry.h"
#include "core/residency.h"
#include "serving/model_costs.h"
#include "serving/pipeline.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"

namespace moesim::serving {

struct SystemConfig {
  // A system spec, parsed once where it is read (`moesim policies`), e.g. zipmoe:delta=1,shards=2.
  PolicySpec system{"offload", {}};
  // Where a system parameter came from when not from the spec itself ("e_ratio" -> "--store s.mst"), for the
  // run header.
  std::map<std::string, std::string> param_sources;
  // Eviction policy spec (`moesim policies`), parsed once where it is read; for zipmoe the in-pool eviction.
  // Empty name: the system's default (SystemTraits::eviction). System::build hands it to the residency, which
  // builds its policies (one per pool for zipmoe) from it.
  PolicySpec eviction;
  // The policies of the run, parsed once where they are read (their parameters are checked when built).
  PolicySpec routing{"identity", {}};
  // The records behind the stream: every routing policy but identity reads each token's routing from them
  // (traces/token_routing.h). Must outlive run(); null only with identity routing.
  const traces::Trace* trace = nullptr;
  PolicySpec scheduling;  // empty name: the system's default (SystemTraits::scheduling)
  PolicySpec prefetch{"none", {}};
  // The popularity profile of a system that plans its pools (ZipMoE's rank-based inclusion probabilities,
  // §3.4): measured on this stream where given (a profiling trace, run as the paper profiles offline), else
  // on the run's own stream. Must outlive run(). profile_source names it for the report.
  const traces::LookupStream* profile_stream = nullptr;
  std::string profile_source;
  // Warm state (--warm, --warm-from): this stream runs first, on the same residency, policies and platform
  // (expert caches and, buffered, the page cache stay as it leaves them), and the result covers only the
  // run's own stream after it: its steps and times, and its cache and resource counters (the warm pass's
  // subtracted; max_over_capacity is over both). Lifetimes count the residencies that began after the warm
  // pass. Must outlive run(); null: the caches start empty. Identity routing only.
  const traces::LookupStream* warm_stream = nullptr;
  std::string warm_source;
  CacheScope scope = CacheScope::kGlobal;
  CacheCapacity budget;
  // Memory: UMA (one shared tier) or a discrete GPU (device memory; host_budget_bytes > 0 adds a host tier).
  bool unified_memory = true;
  uint64_t host_budget_bytes = 0;
  ResourceClass recover_on = ResourceClass::kGpu;
  ResourceClass compute_on = ResourceClass::kGpu;
  bool compute_after_loads = false;  // PipelineOptions::compute_after_loads (--compute-after-loads)
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

// What a system is, for its callers (nothing outside serving/systems/ compares a system's name). Declared on
// the system's registry entry (MOESIM_REGISTER's argument after its PolicyNeeds), so a caller asks
// system_traits(spec) instead of building the system.
struct SystemTraits {
  std::string eviction = "lru";     // default eviction spec (of the in-pool eviction for pooled systems)
  std::string scheduling = "fcfs";  // default scheduling policy
  std::string planner{};            // planning policy that sizes its pools (PlanningRegistry); "" = none
  bool per_layer_scope = false;     // its caches are per layer whatever --scope says
  bool host_tier = false;           // can put a host-memory tier behind device memory (host_budget_bytes)
  bool uses_store_layout = false;   // takes rho (e_ratio) and K (shards) from a packed store
  bool partial_states = false;      // lookups can find experts in states between full and missed (C, S, E)
  bool cluster = false;         // serves a cluster of servers (System::cluster()), not one device's stream
  bool places_experts = false;  // a cluster system that places experts across the servers (--placement)
  bool plans_pools() const { return !planner.empty(); }
};

// What a system's build sees of the run.
struct SystemBuildContext {
  const SystemConfig& cfg;
  const traces::LookupStream& stream;
  const traces::TraceInfo& info;
  const SourcedCosts& costs;
  const Platform& platform;
};

class ClusterSystem;  // serving/cluster_serving.h

class System {
 public:
  virtual ~System() = default;
  // A cluster system's cluster serving (`moesim cluster`); nullptr for a system of one device.
  virtual const ClusterSystem* cluster() const { return nullptr; }
  // The residency of this run. May set pipeline options (its load layout po.loads, serving/load_layout.h,
  // when its tensors are not loaded whole; whole-layer loads) and the result's capacity and plan. `eviction`
  // is the spec to use (cfg.eviction or the default).
  virtual std::unique_ptr<Residency> build(const SystemBuildContext& ctx, const PolicySpec& eviction,
                                           PipelineOptions& po, RunResult& r) const = 0;
};

}  // namespace moesim::serving

namespace moesim {
// A system's registry entry holds its SystemTraits.
template <>
struct EntryTraits<serving::System> {
  using type = serving::SystemTraits;
};
// In namespace moesim, as every registry, so that MOESIM_REGISTER(SystemRegistry, ...) names it. Factory:
// std::unique_ptr<serving::System>(const Params& the spec's parameters).
using SystemRegistry = Registry<serving::System>;
}  // namespace moesim

namespace moesim::serving {

// The names of the systems, for option help and errors.
std::vector<std::string> system_names();
// A system spec as read from a flag or a file: parsed once, the system known (its parameters are checked when
// it is built). Throws moesim::UsageError for bad syntax or an unknown system (listing the known ones).
PolicySpec parse_system_spec(const std::string& text);
// Builds a system from its spec. Throws moesim::UsageError for an unknown system (listing the known ones),
// an unknown parameter (listing the system's), a value out of its declared type or range, or bad syntax.
std::unique_ptr<System> make_system(const PolicySpec& spec);
// The traits on the spec's system's registry entry (no system is built). Throws as parse_system_spec.
const SystemTraits& system_traits(const PolicySpec& spec);
// Whether the spec's system declares parameter `key` (throws as parse_system_spec).
bool system_declares(const PolicySpec& spec, const std::string& key);
// The systems with a host-memory tier ("offload, layer-offload"), for messages.
std::string systems_with_host_tier();
// The systems with a planner (SystemTraits::planner: "zipmoe"), for messages.
std::string systems_with_planner();
// The systems that declare parameter `key` ("zipmoe"), for messages about flags that feed it.
std::string systems_declaring(const std::string& key);
// The spec with key=value: added when `replace` is false (throws moesim::UsageError naming `flag` when the
// spec already sets key), replaced otherwise. Commas in value become '+' (the spec's list separator).
PolicySpec with_system_param(PolicySpec spec, const std::string& key, std::string value,
                             const std::string& flag, bool replace = false);

// Runs the stream (built with the batch size wanted) on `platform` (fresh: times start at its now()).
// Throws moesim::Error for a bad policy spec, an unknown system or a budget that cannot hold one invocation.
RunResult run(const SystemConfig& cfg, const traces::LookupStream& stream, const traces::TraceInfo& info,
              const SourcedCosts& costs, Platform& platform);

// The "config" part of a run's JSON (system, policies with parameters, budget, scope, batch, memory tiers,
// platform units, sizes, plan).
Json config_json(const SystemConfig& cfg, const RunResult& r, const SourcedCosts& costs,
                 const traces::TraceInfo& info, uint32_t batch, const Platform& platform);

}  // namespace moesim::serving
