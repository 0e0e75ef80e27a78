// The full-tensor offloading system (`moesim run --system offload`): experts live whole on the SSD; a
// GPU-visible expert cache of `budget` bytes (core/eviction.h's ExpertCache, managed by the chosen
// eviction policy) holds the experts read so far; a missed expert is read whole (one read per tensor),
// made visible to the GPU over the link (zero-copy on UMA) and computed. The non-expert (dense) weights
// -- attention, router, shared experts -- are assumed resident in memory for the whole run (they are not
// charged to the budget and never read from the SSD), which is how llama.cpp-style offloading and
// ZipMoE's baselines keep them.
//
// Sizes (which bytes an expert has) -- offload_costs():
//   * with a model (--model): the model preset's sizes: bytes_per_expert() in its dtype, its dense bytes,
//     its FLOPs. A what-if: "this routing on that model's weights".
//   * without: the trace's own per-layer expert_bytes (the file the recording engine actually ran, e.g.
//     the Q4_K_M GGUF of the bundled traces), dense bytes from the trace's provenance when recorded there,
//     otherwise the preset's dense bytes scaled by the same quantization ratio (trace expert bytes /
//     preset expert bytes); FLOPs and the tensor split from the preset the trace's model name starts with
//     (element counts do not depend on quantization). Without such a preset the run needs --model.
// The chosen rule is written into the run's configuration ("sizes").
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/eviction.h"
#include "core/hardware_profile.h"
#include "core/json_io.h"
#include "core/model_spec.h"
#include "core/pipeline.h"
#include "sim/sim_platform.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"

namespace moesim::sim {

struct OffloadCosts {
  ModelCosts costs;
  Json sizes;  // where every number came from
};

OffloadCosts offload_costs(const traces::TraceInfo& info, const std::optional<ModelSpec>& model);

struct OffloadConfig {
  std::string eviction = "lru";
  std::string routing = "identity";
  std::string scheduling = "fcfs";
  CacheScope scope = CacheScope::kGlobal;
  CacheCapacity budget;
  SimOptions sim;
  bool record_timeline = false;
  uint32_t timeline_first_step = 0;          // PipelineOptions: the recorded window of steps
  uint32_t timeline_last_step = UINT32_MAX;  // (inclusive)
  std::function<void(uint64_t, uint64_t)> on_step;  // PipelineOptions::on_step (progress)
};

struct OffloadResult {
  PipelineResult result;
  std::string eviction;  // canonical names with every parameter
  std::string routing;
  std::string scheduling;
  uint64_t cache_capacity_bytes = 0;
  uint64_t cache_capacity_experts = 0;
};

// Runs the stream (built with the batch size wanted) on a fresh SimPlatform. Throws moesim::Error for a
// bad policy spec or a budget below one layer's top-k experts (make_cache_config).
OffloadResult run_offload(const traces::LookupStream& stream, const traces::TraceInfo& info,
                          const OffloadCosts& costs, const HardwareProfile& hw, const OffloadConfig& cfg);

// The "config" part of a run's JSON (policies with parameters, budget, scope, batch, sim options, sizes).
Json offload_config_json(const OffloadConfig& cfg, const OffloadResult& r, const OffloadCosts& costs,
                         const traces::TraceInfo& info, uint32_t batch, const HardwareProfile& hw);

}  // namespace moesim::sim
