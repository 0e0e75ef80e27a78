// Eviction policies (ARCHITECTURE.md §3, lookup semantics §4): the interface every policy in
// policies/eviction/ implements, the cache that drives a policy, and the registry they plug into.
//
// Vocabulary
//   key        dense id layer * experts + expert (core/expert_key.h); hot paths index flat arrays by it.
//   partition  the independent cache a key lives in: scope kPerLayer => partition = layer (one cache per
//              layer, capacities per layer); scope kGlobal => partition 0 (one cache over all keys).
//   weight     what one resident key costs in capacity units: 1 when the capacity is counted in experts,
//              the expert's bytes (per layer, CacheConfig::key_weight) when it is counted in bytes with
//              expert sizes that differ between layers. Eviction continues until used <= capacity.
//
// Invocation protocol (the unit of lookup is one layer invocation, traces/lookup_stream.h):
//   cache.begin_invocation(layer, decode)
//   cache.lookup(key, next_use)  for each UNIQUE key of the invocation  -> hit or miss; a miss is admitted
//   cache.end_invocation(n)      n = lookups made; eviction runs now, after all admissions:
//       1. while used > capacity: policy.evict(part) -- the policy MUST NOT return a key looked up since
//          its begin_invocation (the "in use" keys);
//       2. policy.end_invocation(part): the in-use protection is lifted;
//       3. if still over capacity, the excess experts "pass through": they were loaded and used, and are
//          now evicted in policy order (in-use keys included) until the capacity holds again, so no later
//          lookup can hit an expert the cache could not hold. When the invocation's own experts exceed the
//          capacity (typically a prefill pass touching more experts than a small per-layer cache holds)
//          the configuration is DEGENERATE for that invocation: it is counted
//          (CacheCounters::over_capacity_invocations, with the largest excess of an invocation's needs
//          over the capacity); callers report the count, it is never silent. A policy may also decline to
//          evict keys that are not in use (static-freq keeps its pinned experts): such a pass-through is by
//          design and is not counted.
//   Capacities below one expert, or below one layer's top_k (a single decode invocation would not fit),
//   are rejected by make_cache_config with a moesim::Error.
//
// Policy contract (EvictionPolicy): the policy sees every lookup (on_hit / on_admit) and chooses victims
// (evict). It owns only its ordering structures; residency and capacity accounting belong to the cache.
// Hooks receive the partition explicitly so that no policy ever divides a key by `experts`. No hook may
// allocate in steady state (size everything from CacheConfig in the constructor).
//
// Oracle information: Belady-type policies read `next_use` given to on_hit/on_admit (the invocation
// index of the key's next lookup, traces::kNoNextUse = never; LookupStream::next_use); their factories
// throw unless CacheConfig::next_use_available. Frequency oracles read CacheConfig::key_frequency
// (whole-trace lookups per key; see key_frequencies()); their factories throw when it is empty.
//
// Two ways to drive a policy:
//   * general path (the timed pipeline, core/pipeline): ExpertCache = BasicCache<EvictionPolicy>, one
//     virtual call per hook, evicted keys reported per invocation;
//   * fast path (sim/replay): EvictionPolicy::replay(view) runs the whole lookup stream through
//     BasicCache<Derived> with Derived a `final` class, so every hook is devirtualized and inlined.
//     Policies get it for free by deriving from EvictionPolicyBase<Derived>.
// Both paths execute the same code (BasicCache), so they give identical counts.
//
// Thread safety: a policy instance and its cache are single-threaded; distinct instances are independent
// (a capacity sweep runs one instance per thread). Randomized policies take a `seed` parameter and use
// moesim::Rng only, so the same seed gives identical results on every thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/registry.h"

namespace moesim {

inline constexpr uint32_t kNoKey = 0xFFFFFFFFu;
inline constexpr uint32_t kNeverUsedAgain = 0xFFFFFFFFu;  // == traces::kNoNextUse

enum class CacheScope : uint8_t { kGlobal, kPerLayer };
const char* scope_name(CacheScope s);          // "global" / "layer"
CacheScope parse_scope(const std::string& s);  // "global", "layer" (or "per-layer"); throws

// How big the cache is, as the user said it.
struct CacheCapacity {
  enum class Unit : uint8_t { kExperts, kBytes };
  Unit unit = Unit::kExperts;
  // kExperts: experts PER LAYER. Scope kPerLayer: every layer's cache holds `value` experts. Scope kGlobal:
  //           one cache of value * layers experts (counted in experts, whatever their sizes).
  // kBytes:   a total byte budget. Scope kPerLayer: every layer gets floor(value / layers) bytes, i.e.
  //           floor(that / expert_bytes[layer]) experts. Scope kGlobal: one cache of `value` bytes; when all
  //           layers have the same expert size this is floor(value / expert_bytes) experts, otherwise keys
  //           are weighed in bytes.
  uint64_t value = 0;
  static CacheCapacity parse(const std::string& text);  // "3000MiB" (a unit) -> bytes; "32" -> experts
  std::string to_string() const;                        // "32 experts/layer" or "3000 MiB"
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
// traces::LookupStream by sim/replay). inv_phase: 1 = decode (traces::Phase::kDecode), 0 = prefill.
struct LookupView {
  std::span<const uint32_t> inv_begin;  // [invocations + 1]
  std::span<const uint16_t> inv_layer;  // [invocations]
  std::span<const uint8_t> inv_phase;   // [invocations]
  std::span<const uint32_t> key;        // [lookups]
  std::span<const uint32_t> next_use;   // [lookups]; may be empty when no policy needs it
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

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;

  // A new invocation on partition `part` starts; keys looked up from now on are "in use".
  virtual void begin_invocation(uint32_t part) = 0;
  // `key` was resident (hit) / was not and has just been admitted (miss). next_use: see the header.
  virtual void on_hit(uint32_t key, uint32_t part, uint32_t next_use) = 0;
  virtual void on_admit(uint32_t key, uint32_t part, uint32_t next_use) = 0;
  // Chooses a resident key of `part`, removes it from the policy's structures and returns it; kNoKey when
  // every resident key of `part` is in use (or none is resident). Never returns an in-use key before
  // end_invocation(part).
  virtual uint32_t evict(uint32_t part) = 0;
  // The invocation's eviction is over; its keys lose their protection.
  virtual void end_invocation(uint32_t part) = 0;

  // Fast path: runs a whole stream through this (fresh) instance with the hooks devirtualized.
  virtual CacheCounters replay(const LookupView& view) = 0;

  const CacheConfig& config() const { return cfg_; }

 protected:
  explicit EvictionPolicy(const CacheConfig& cfg) : cfg_(cfg) { cfg_.key_frequency = {}; }
  EvictionPolicy(const EvictionPolicy&) = delete;
  EvictionPolicy& operator=(const EvictionPolicy&) = delete;

 private:
  CacheConfig cfg_;  // a copy; key_frequency is reset (it need not outlive the factory)
};

// The cache: residency, capacity accounting and the invocation protocol, over a policy type P (the
// EvictionPolicy interface, or a final policy class for the devirtualized fast path).
template <typename P>
class BasicCache {
 public:
  BasicCache(const CacheConfig& cfg, P& policy)
      : cfg_(&cfg),
        policy_(&policy),
        resident_(cfg.keys(), 0),
        used_(cfg.partitions(), 0),
        weight_(cfg.key_weight.data()),
        capacity_(cfg.capacity.data()) {}

  void begin_invocation(uint32_t layer, bool decode) {
    part_ = cfg_->partition_of_layer(layer);
    layer_ = layer;
    decode_ = decode;
    misses_ = 0;
    ++counters_.invocations;
    policy_->begin_invocation(part_);
  }

  // One unique key of the current invocation. Returns true on a hit; a miss is admitted.
  bool lookup(uint32_t key, uint32_t next_use) {
    const bool hit = resident_[key] != 0;
    if (hit) {
      policy_->on_hit(key, part_, next_use);
    } else {
      resident_[key] = 1;
      used_[part_] += weight_[key];
      ++misses_;
      policy_->on_admit(key, part_, next_use);
    }
    return hit;
  }

  // Runs eviction (see the header comment); evicted keys are appended to `evicted` when given.
  // `lookups` is the number of lookup() calls of this invocation (for the counters).
  void end_invocation(uint32_t lookups, std::vector<uint32_t>* evicted = nullptr) {
    counters_.lookups += lookups;
    counters_.hits += lookups - misses_;
    if (decode_) {
      counters_.decode_lookups += lookups;
      counters_.decode_hits += lookups - misses_;
    }
    if (!cfg_->expert_bytes.empty()) counters_.read_bytes += misses_ * cfg_->expert_bytes[layer_];
    const uint64_t cap = capacity_[part_];
    while (used_[part_] > cap) {
      const uint32_t v = policy_->evict(part_);
      if (v == kNoKey) break;
      drop(v, evicted);
    }
    policy_->end_invocation(part_);
    if (used_[part_] > cap) [[unlikely]] {
      // All keys of an invocation belong to one layer, hence weigh the same.
      const uint64_t needed = uint64_t{lookups} * weight_[uint64_t{layer_} * cfg_->experts];
      if (needed > cap) {
        ++counters_.over_capacity_invocations;
        counters_.max_over_capacity = std::max(counters_.max_over_capacity, needed - cap);
      }
      while (used_[part_] > cap) {
        const uint32_t v = policy_->evict(part_);
        if (v == kNoKey)
          throw Error("eviction policy returned no victim although its cache is over capacity");
        drop(v, evicted);
      }
    }
  }

  bool resident(uint32_t key) const { return resident_[key] != 0; }
  uint64_t used(uint32_t part) const { return used_[part]; }
  const CacheCounters& counters() const { return counters_; }

 private:
  void drop(uint32_t v, std::vector<uint32_t>* evicted) {
    resident_[v] = 0;
    used_[part_] -= weight_[v];
    ++counters_.evictions;
    if (evicted) evicted->push_back(v);
  }

  const CacheConfig* cfg_;
  P* policy_;
  std::vector<uint8_t> resident_;
  std::vector<uint64_t> used_;
  const uint64_t* weight_;
  const uint64_t* capacity_;
  uint32_t part_ = 0, layer_ = 0;
  bool decode_ = false;
  uint64_t misses_ = 0;
  CacheCounters counters_;
};

// Runs a whole stream through `policy` (a fresh instance). Used by EvictionPolicyBase::replay.
template <typename P>
CacheCounters replay_stream(P& policy, const CacheConfig& cfg, const LookupView& v) {
  BasicCache<P> cache(cfg, policy);
  const bool have_next_use = !v.next_use.empty();
  const uint32_t* keys = v.key.data();
  const uint32_t* next = v.next_use.data();
  const size_t n = v.invocations();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t b = v.inv_begin[i], e = v.inv_begin[i + 1];
    cache.begin_invocation(v.inv_layer[i], v.inv_phase[i] == 1);
    if (have_next_use) {
      for (uint32_t j = b; j < e; ++j) cache.lookup(keys[j], next[j]);
    } else {
      for (uint32_t j = b; j < e; ++j) cache.lookup(keys[j], kNeverUsedAgain);
    }
    cache.end_invocation(e - b);
  }
  return cache.counters();
}

// Base class of concrete policies: declare `class Lru final : public EvictionPolicyBase<Lru>`.
template <typename Derived>
class EvictionPolicyBase : public EvictionPolicy {
 public:
  CacheCounters replay(const LookupView& view) override {
    if (replayed_) throw Error("EvictionPolicy::replay needs a fresh policy instance");
    replayed_ = true;
    return replay_stream(static_cast<Derived&>(*this), config(), view);
  }

 protected:
  explicit EvictionPolicyBase(const CacheConfig& cfg) : EvictionPolicy(cfg) {}

 private:
  bool replayed_ = false;
};

// The general-path cache the timed pipeline uses: owns its policy.
class ExpertCache {
 public:
  // spec: "lru", "random:seed=7", ... (see `moesim policies`). Throws moesim::Error on a bad spec.
  ExpertCache(const std::string& spec, const CacheConfig& cfg);
  void begin_invocation(uint32_t layer, bool decode) { cache_->begin_invocation(layer, decode); }
  bool lookup(uint32_t key, uint32_t next_use) { return cache_->lookup(key, next_use); }
  void end_invocation(uint32_t lookups, std::vector<uint32_t>* evicted = nullptr) {
    cache_->end_invocation(lookups, evicted);
  }
  bool resident(uint32_t key) const { return cache_->resident(key); }
  const CacheCounters& counters() const { return cache_->counters(); }
  const CacheConfig& config() const { return *cfg_; }
  const std::string& policy_name() const { return canonical_; }  // with every parameter

 private:
  std::unique_ptr<CacheConfig> cfg_;  // stable address for the cache
  std::unique_ptr<EvictionPolicy> policy_;
  std::unique_ptr<BasicCache<EvictionPolicy>> cache_;
  std::string canonical_;
};

using EvictionRegistry = Registry<EvictionPolicy, const CacheConfig&>;

// Canonical "name:k=v,..." of a spec with every parameter (throws listing known policies/parameters).
std::string eviction_canonical_name(const std::string& spec);
// Creates a policy; throws on an unknown policy/parameter, or missing oracle information.
std::unique_ptr<EvictionPolicy> make_eviction_policy(const std::string& spec, const CacheConfig& cfg);

}  // namespace moesim
