// The cache: residency, capacity accounting and the invocation protocol over an eviction policy
// (core/eviction_policy.h), for both the timed pipeline and the devirtualized replay fast path.
//
// Invocation protocol (the unit of lookup is one layer invocation, traces/lookup_stream.h; every caller walks
// it through core/invocation_walker.h, which owns the order of the calls below):
//   cache.begin_invocation(layer, decode)
//   cache.lookup(key, next_use)  for each UNIQUE key of the invocation  -> hit or miss; a miss is admitted
//   cache.refresh(key)           for each refresh of the invocation (traces/lookup_stream.h): a key looked up
//                                earlier in this invocation is touched again; only the policy's order may
//                                change (EvictionPolicy::on_refresh), no counter does
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
// Two ways to drive a policy:
//   * general path (the timed pipeline, serving/pipeline): ExpertCache = BasicCache<EvictionPolicy>, one
//     virtual call per hook, evicted keys reported per invocation;
//   * fast path (replay/cache_replay): EvictionPolicy::replay(view) runs the whole lookup stream through
//     BasicCache<Derived> with Derived a `final` class, so every hook is devirtualized and inlined.
//     Policies get it for free by deriving from EvictionPolicyBase<Derived>.
// Both paths execute the same code (BasicCache), so they give identical counts.
//
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/interrupt.h"
#include "core/cache_config.h"
#include "core/eviction_policy.h"
#include "core/invocation_walker.h"

namespace moesim {

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
    policy_->on_layer(layer, decode);
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

  // A key looked up earlier in the current invocation is touched again (see the header comment).
  void refresh(uint32_t key) { policy_->on_refresh(key, part_); }

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

  // Admits `key` of `layer` ahead of its use (a prefetch), between invocations: as the policy's on_admit
  // would, then evicts in policy order until the partition fits, never `key` itself while another victim
  // exists. Not a lookup: only prefetch_admissions() and the eviction counter change. Returns whether it
  // is resident afterwards (false: the partition cannot hold it at all). Already resident: no change.
  bool prefetch(uint32_t layer, uint32_t key, uint32_t next_use, std::vector<uint32_t>* evicted = nullptr) {
    if (resident_[key]) return true;
    const uint32_t part = cfg_->partition_of_layer(layer);
    if (weight_[key] > capacity_[part]) return false;
    policy_->begin_invocation(part);  // protects `key` while the others are evicted
    resident_[key] = 1;
    used_[part] += weight_[key];
    ++prefetch_admissions_;
    policy_->on_admit(key, part, next_use);
    while (used_[part] > capacity_[part]) {
      const uint32_t v = policy_->evict(part);
      if (v == kNoKey) break;
      drop(v, part, evicted);
    }
    policy_->end_invocation(part);
    while (used_[part] > capacity_[part]) {  // only `key` was left to evict
      const uint32_t v = policy_->evict(part);
      if (v == kNoKey) throw Error("eviction policy returned no victim although its cache is over capacity");
      drop(v, part, evicted);
    }
    return resident_[key] != 0;
  }

  bool resident(uint32_t key) const { return resident_[key] != 0; }
  uint64_t used(uint32_t part) const { return used_[part]; }
  const CacheCounters& counters() const { return counters_; }
  uint64_t prefetch_admissions() const { return prefetch_admissions_; }

 private:
  void drop(uint32_t v, std::vector<uint32_t>* evicted) { drop(v, part_, evicted); }
  void drop(uint32_t v, uint32_t part, std::vector<uint32_t>* evicted) {
    resident_[v] = 0;
    used_[part] -= weight_[v];
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
  uint64_t prefetch_admissions_ = 0;
  CacheCounters counters_;
};

// Runs a whole stream through `policy` (a fresh instance). Used by EvictionPolicyBase::replay.
template <typename P>
CacheCounters replay_stream(P& policy, const CacheConfig& cfg, const LookupView& v) {
  BasicCache<P> cache(cfg, policy);
  const size_t n = v.invocations();
  for (size_t i = 0; i < n; ++i) {
    if ((i & 0xFFF) == 0) interrupt_point();  // every 4096 invocations: about a millisecond
    InvocationWalker::walk_stream(cache, v, static_cast<uint32_t>(i), [](uint32_t, uint32_t, bool) {});
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
  ExpertCache(const PolicySpec& spec, const CacheConfig& cfg);  // a spec parsed once by the caller
  void begin_invocation(uint32_t layer, bool decode) { cache_->begin_invocation(layer, decode); }
  bool lookup(uint32_t key, uint32_t next_use) { return cache_->lookup(key, next_use); }
  void refresh(uint32_t key) { cache_->refresh(key); }
  void end_invocation(uint32_t lookups, std::vector<uint32_t>* evicted = nullptr) {
    cache_->end_invocation(lookups, evicted);
  }
  bool prefetch(uint32_t layer, uint32_t key, uint32_t next_use, std::vector<uint32_t>* evicted = nullptr) {
    return cache_->prefetch(layer, key, next_use, evicted);
  }
  bool resident(uint32_t key) const { return cache_->resident(key); }
  const CacheCounters& counters() const { return cache_->counters(); }
  uint64_t prefetch_admissions() const { return cache_->prefetch_admissions(); }
  const CacheConfig& config() const { return *cfg_; }
  const std::string& policy_name() const { return canonical_; }  // with every parameter

 private:
  std::unique_ptr<CacheConfig> cfg_;  // stable address for the cache
  std::unique_ptr<EvictionPolicy> policy_;
  std::unique_ptr<BasicCache<EvictionPolicy>> cache_;
  std::string canonical_;
};

}  // namespace moesim
