// The cache-only fast path behind `moesim replay`: a lookup stream (traces/lookup_stream.h) through one
// eviction policy at one capacity, no timing model. Each run builds a fresh policy and calls its
// devirtualized EvictionPolicy::replay (core/eviction.h), so the counts equal those of the timed
// pipeline's ExpertCache on the same stream.
//
// Sweeps: replay_sweep runs independent (policy, capacity) configurations on up to `threads` std::threads
// (replay/replay_sweep.h): results are identical for every thread count, and every configuration is
// validated before any thread starts.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/eviction.h"
#include "base/json_io.h"
#include "traces/lookup_stream.h"

namespace moesim::replay {

struct ReplayConfig {
  std::string policy = "lru";  // "name:key=value,..." (see `moesim policies`)
  CacheScope scope = CacheScope::kPerLayer;
  CacheCapacity capacity;  // experts per layer, or bytes (core/eviction.h explains both per scope)
};

struct ReplayResult {
  std::string policy;  // canonical, every parameter spelled out
  CacheScope scope = CacheScope::kPerLayer;
  CacheCapacity capacity;           // as requested
  uint64_t capacity_experts = 0;    // resulting capacity summed over partitions
  uint64_t capacity_bytes = 0;      // the same in bytes; 0 when unknown or not fixed (CacheConfig)
  bool expert_sizes_known = false;  // read_bytes is meaningful
  CacheCounters counters;
  double hit_pct = 0;         // 100 * hits / lookups
  double decode_hit_pct = 0;  // 100 * decode_hits / decode_lookups (0 when there is no decode)
  double seconds = 0;         // wall time of the replay loop only
  double lookups_per_s = 0;
};

// The oracle information an eviction policy spec needs (CacheConfig::next_use_available, key_frequency), as
// its registry entry declares it (core/registry.h PolicyNeeds). Throws moesim::Error for an unknown policy.
const PolicyNeeds& oracle_needs(const std::string& policy);

// A stream prepared once for any number of runs: the view, whole-trace key frequencies and expert sizes.
// Keeps a reference to `stream`, which must outlive it.
class ReplayInput {
 public:
  // expert_bytes: per layer (or one value), empty when unknown (byte capacities are then rejected).
  ReplayInput(const traces::LookupStream& stream, uint32_t top_k, std::vector<uint64_t> expert_bytes);
  // A view that is already validated (the lookup index of an .mtr file, traces/mtr_format.h
  // read_mtr_lookups): no stream() behind it. The view's arrays must outlive the input.
  ReplayInput(const LookupView& view, uint32_t layers, uint32_t experts, uint32_t top_k,
              std::vector<uint64_t> expert_bytes);

  const traces::LookupStream& stream() const;  // throws when built from a view
  const LookupView& view() const { return view_; }
  CacheConfig cache_config(const ReplayConfig& rc) const;  // validated; throws moesim::Error

 private:
  const traces::LookupStream* stream_ = nullptr;
  uint32_t layers_, experts_;
  uint32_t top_k_;
  std::vector<uint64_t> expert_bytes_;
  // Whole-stream lookups per key, computed on the first configuration whose policy needs them.
  mutable std::once_flag frequency_once_;
  mutable std::vector<uint64_t> frequency_;
  LookupView view_;
};

ReplayResult replay(const ReplayInput& in, const ReplayConfig& rc);
// A result from its configuration and what a run counted in `seconds` (the derived rates filled in).
ReplayResult replay_result(const ReplayConfig& rc, const CacheConfig& cfg, const CacheCounters& counters,
                           double seconds);
// Results in the order of `configs`, whatever the thread count; threads = 0 means
// std::thread::hardware_concurrency(). `on_done` (progress) is called once per finished configuration, from
// the worker threads.
std::vector<ReplayResult> replay_sweep(const ReplayInput& in, const std::vector<ReplayConfig>& configs,
                                       unsigned threads, const std::function<void()>& on_done = {});

Json to_json(const ReplayResult& r);

}  // namespace moesim::replay
