// The eviction policy interface (docs/architecture.md §3) every policy in policies/eviction/ implements, and
// its registry. The cache that drives a policy is core/expert_cache.h.
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
// Thread safety: a policy instance and its cache are single-threaded; distinct instances are independent
// (a capacity sweep runs one instance per thread). Randomized policies take a `seed` parameter and use
// moesim::Rng only, so the same seed gives identical results on every thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/cache_config.h"
#include "core/registry.h"

namespace moesim {

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;

  // A lookup invocation of `layer` in phase prefill (decode false) or decode begins; begin_invocation of its
  // partition follows. Called by the caches before the lookups of an invocation, never before a prefetch's
  // admission. Most policies need neither; the activation-aware one keeps a request's activations per layer
  // and starts a new request at a prefill of the first layer.
  virtual void on_layer(uint32_t layer, bool decode) {
    (void)layer;
    (void)decode;
  }
  // A new invocation on partition `part` starts; keys looked up from now on are "in use".
  virtual void begin_invocation(uint32_t part) = 0;
  // `key` was resident (hit) / was not and has just been admitted (miss). next_use: see the header.
  virtual void on_hit(uint32_t key, uint32_t part, uint32_t next_use) = 0;
  virtual void on_admit(uint32_t key, uint32_t part, uint32_t next_use) = 0;
  // `key`, looked up earlier in this invocation, is touched again (a duplicate inside the invocation,
  // traces/lookup_stream.h): its recency is now. Not an access: frequency counts and next uses do not
  // change (the next use is still the next invocation that needs the key). Each policy's file says what it
  // does: LRU and static-freq's LRU part move the key to most recent; LFU moves it to most recent among the
  // keys of its count; FIFO (admission order), Belady (next use), Random and Marking (the key is already
  // in use, hence marked) ignore it.
  virtual void on_refresh(uint32_t key, uint32_t part) = 0;
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

using EvictionRegistry = Registry<EvictionPolicy, const CacheConfig&>;

// Canonical "name:k=v,..." of a spec with every parameter (throws listing known policies/parameters).
std::string eviction_canonical_name(const PolicySpec& spec);
std::string eviction_canonical_name(const std::string& spec);
// Creates a policy; throws on an unknown policy/parameter, or missing oracle information. A caller that
// builds several (one per pool) passes the spec it parsed once.
std::unique_ptr<EvictionPolicy> make_eviction_policy(const PolicySpec& spec, const CacheConfig& cfg);
std::unique_ptr<EvictionPolicy> make_eviction_policy(const std::string& spec, const CacheConfig& cfg);

}  // namespace moesim
