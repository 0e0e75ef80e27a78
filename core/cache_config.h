// Cache configuration and counters (docs/architecture.md §3-4): scope, capacity, the validated CacheConfig a
// cache and its policy are built from, the lookup stream as spans, and the counters a cache keeps. The
// eviction interface is in core/eviction_policy.h, the cache that drives it in core/expert_cache.h;
// core/eviction.h includes all three.
//
// Vocabulary
//   key        dense id layer * experts + expert (layers counted among the MoE layers only, experts among
//              the routed ones); hot paths index flat arrays by it instead of hashing.
//   partition  the independent cache a key lives in: scope kPerLayer => partition = layer (one cache per
//              layer, capacities per layer); scope kGlobal => partition 0 (one cache over all keys).
//   weight     what one resident key costs in capacity units: 1 when the capacity is counted in experts,
//              the expert's bytes (per layer, CacheConfig::key_weight) when it is counted in bytes with
//              expert sizes that differ between layers. Eviction continues until used <= capacity.
//
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace moesim {

inline constexpr uint32_t kNoKey = 0xFFFFFFFFu;
inline constexpr uint32_t kNeverUsedAgain = 0xFFFFFFFFu;  // == traces::kNoNextUse

enum class CacheScope : uint8_t { kGlobal, kPerLayer };
const char* scope_name(CacheScope s);          // "global" / "layer"
CacheScope parse_scope(const std::string& s);  // "global", "layer" (or "per-layer"); throws

// How big the cache is, as the user said it.
struct CacheCapacity {
  enum class Unit : uint8_t { kExperts, kBytes, kShareOfExperts, kTopKMultiple };
  Unit unit = Unit::kExperts;
  // kExperts: experts PER LAYER. Scope kPerLayer: every layer's cache holds `value` experts. Scope kGlobal:
  //           one cache of value * layers experts (counted in experts, whatever their sizes).
  // kBytes:   a total byte budget. Scope kPerLayer: every layer gets floor(value / layers) bytes, i.e.
  //           floor(that / expert_bytes[layer]) experts. Scope kGlobal: one cache of `value` bytes; when all
  //           layers have the same expert size this is floor(value / expert_bytes) experts, otherwise keys
  //           are weighed in bytes.
  // The two relative units make one budget mean the same share of every model in a grid over several:
  // kShareOfExperts ("25%", "12.5%"): `value` parts per million of the model's routed experts: that share of
  //           their bytes when expert sizes are known, else floor(share x experts) experts per layer.
  // kTopKMultiple ("2xtopk", "2x top-k"): floor(value / 1000 x top-k) experts per layer.
  // resolved() turns them into one of the first two once the model is known; make_cache_config does it too.
  uint64_t value = 0;
  // "3000MiB" (a unit) -> bytes; "32" -> experts; "25%" -> share; "2xtopk" -> multiple. Throws Error.
  static CacheCapacity parse(const std::string& text);
  std::string to_string() const;  // "32 experts/layer", "3000 MiB", "25% of the experts", "2 x top-k/layer"
  bool relative() const { return unit == Unit::kShareOfExperts || unit == Unit::kTopKMultiple; }
  // This capacity in experts per layer or bytes for a model of `layers` x `experts` routed experts of top-k
  // `top_k`, whose routed experts weigh `all_experts_bytes` in all (0: sizes unknown). An absolute capacity
  // is returned as it is. Throws Error when the result is below one expert.
  CacheCapacity resolved(uint32_t layers, uint32_t experts, uint32_t top_k, uint64_t all_experts_bytes) const;
};

struct CacheConfig {
  uint32_t layers = 0;
  uint32_t experts = 0;  // per layer; keys = layers * experts
  uint32_t top_k = 0;    // experts per token (validation only)
  CacheScope scope = CacheScope::kPerLayer;
  CacheCapacity requested;  // what the user asked for (for reports)

  std::vector<uint64_t> capacity;      // [partitions], in capacity units
  std::vector<uint64_t> key_weight;    // [keys], capacity units one resident key costs (>= 1)
  std::vector<uint64_t> expert_bytes;  // [layers], bytes of one expert; empty when unknown
  bool weights_are_bytes = false;      // key_weight in bytes (global scope, mixed expert sizes)

  // Oracle information (see the header comment). The span only has to outlive the factory call.
  bool next_use_available = false;
  std::span<const uint64_t> key_frequency;  // [keys] or empty

  uint32_t keys() const { return layers * experts; }
  uint32_t partitions() const { return scope == CacheScope::kGlobal ? 1u : layers; }
  uint32_t partition_of_layer(uint32_t layer) const { return scope == CacheScope::kGlobal ? 0u : layer; }
  // Capacity in experts summed over partitions (exact when weights are experts; bytes / mean expert
  // size, rounded down, otherwise). Bytes summed over partitions; 0 when expert sizes are unknown, or
  // for a global cache counted in experts whose experts differ in size (its byte size is not fixed).
  uint64_t total_capacity_experts() const;
  uint64_t total_capacity_bytes() const;
};

// Builds and validates a configuration. expert_bytes: per layer (or one value for all layers), may be
// empty unless the capacity is in bytes. Throws moesim::Error for: no layers/experts, a byte capacity
// without expert sizes, a capacity below one expert or below top_k experts in any partition.
CacheConfig make_cache_config(uint32_t layers, uint32_t experts, uint32_t top_k, CacheScope scope,
                              CacheCapacity capacity, std::span<const uint64_t> expert_bytes);

// Whole-stream lookups per key, for CacheConfig::key_frequency.
std::vector<uint64_t> key_frequencies(std::span<const uint32_t> keys, uint32_t num_keys);

// A lookup stream seen through spans, so that core does not depend on traces/ (built from a
// traces::LookupStream by replay/cache_replay). inv_phase: 1 = decode (traces::Phase::kDecode), 0 = prefill.
struct LookupView {
  std::span<const uint32_t> inv_begin;  // [invocations + 1]
  std::span<const uint16_t> inv_layer;  // [invocations]
  std::span<const uint8_t> inv_phase;   // [invocations]
  std::span<const uint32_t> key;        // [lookups]
  std::span<const uint32_t> next_use;   // [lookups]; may be empty when no policy needs it
  // Refreshes (traces/lookup_stream.h): refresh[refresh_begin[i] .. refresh_begin[i+1]) are lookup indices
  // of invocation i whose experts are touched again, in the order to refresh them after its lookups. Both
  // empty: no refreshes.
  std::span<const uint32_t> refresh_begin;  // [invocations + 1] or empty
  std::span<const uint32_t> refresh;
  size_t invocations() const { return inv_layer.size(); }
};

struct CacheCounters {
  uint64_t invocations = 0;
  uint64_t lookups = 0;
  uint64_t hits = 0;
  uint64_t decode_lookups = 0;
  uint64_t decode_hits = 0;
  uint64_t read_bytes = 0;  // bytes of the missed experts (0 when expert sizes are unknown)
  uint64_t evictions = 0;
  uint64_t over_capacity_invocations = 0;  // degenerate invocations (see the header comment)
  uint64_t max_over_capacity = 0;          // largest excess of an invocation's needs, capacity units
  bool operator==(const CacheCounters&) const = default;
};

}  // namespace moesim
