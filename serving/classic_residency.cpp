#include "serving/classic_residency.h"

#include <optional>

#include "base/error.h"

namespace moesim::serving {
namespace {

void send(MemoryListener* l, const MemoryEvent& e) {
  if (l) l->memory_event(e);
}

uint64_t key_bytes(const CacheConfig& c, uint32_t key) {
  return c.expert_bytes.empty() ? 0 : c.expert_bytes[key / c.experts];
}

// One ExpertCache as pool `pool` of a residency: admissions and evictions become memory events.
class Tier {
 public:
  Tier(const PolicySpec& spec, const CacheConfig& cfg, uint32_t pool) : cache_(spec, cfg), pool_(pool) {}
  ExpertCache& cache() { return cache_; }
  const ExpertCache& cache() const { return cache_; }
  // Lookup of the current invocation; emits the admission of a miss.
  bool lookup(uint32_t key, uint32_t next_use, MemoryListener* emit) {
    const bool hit = cache_.lookup(key, next_use);
    if (!hit) send(emit, MemoryEvent{MemoryEvent::Kind::kAdmit, pool_, key, TensorPart::kWhole, bytes(key)});
    return hit;
  }
  void end_invocation(uint32_t lookups, MemoryListener* emit) {
    evicted_.clear();
    cache_.end_invocation(lookups, &evicted_);
    emit_evictions(emit);
  }
  bool prefetch(uint32_t layer, uint32_t key, uint32_t next_use, MemoryListener* emit) {
    if (cache_.resident(key)) return true;
    evicted_.clear();
    const bool in = cache_.prefetch(layer, key, next_use, &evicted_);
    // The admission comes first so that bytes in use never go negative; a key dropped again is evicted.
    send(emit, MemoryEvent{MemoryEvent::Kind::kAdmit, pool_, key, TensorPart::kWhole, bytes(key)});
    emit_evictions(emit);
    return in;
  }
  uint64_t bytes(uint32_t key) const { return key_bytes(cache_.config(), key); }

 private:
  void emit_evictions(MemoryListener* emit) {
    for (uint32_t k : evicted_)
      send(emit, MemoryEvent{MemoryEvent::Kind::kEvict, pool_, k, TensorPart::kWhole, bytes(k)});
  }
  ExpertCache cache_;
  uint32_t pool_;
  std::vector<uint32_t> evicted_;
};

class SinglePool final : public Residency {
 public:
  SinglePool(const PolicySpec& spec, const CacheConfig& cfg, MemoryTier tier)
      : tier_(spec, cfg, 0), where_(tier) {}
  std::vector<PoolInfo> pools() const override {
    return {PoolInfo{"full-tensor pool", where_, tier_.cache().config().total_capacity_bytes()}};
  }
  std::string name() const override { return tier_.cache().policy_name(); }
  void begin_invocation(uint32_t layer, bool decode) override {
    tier_.cache().begin_invocation(layer, decode);
  }
  LookupResult lookup(uint32_t key, uint32_t next_use, uint32_t) override {
    const bool hit = tier_.lookup(key, next_use, listener_);
    return LookupResult{hit ? ExpertState::kFull : ExpertState::kMissed, where_};
  }
  void refresh(uint32_t key) override { tier_.cache().refresh(key); }
  void end_invocation(uint32_t lookups) override { tier_.end_invocation(lookups, listener_); }
  ExpertState prefetch(uint32_t layer, uint32_t key, uint32_t next_use, ExpertState* target) override {
    if (tier_.cache().resident(key)) {
      *target = ExpertState::kFull;
      return ExpertState::kFull;
    }
    const bool in = tier_.prefetch(layer, key, next_use, listener_);
    *target = in ? ExpertState::kFull : ExpertState::kMissed;
    return ExpertState::kMissed;
  }
  LookupResult peek(uint32_t key) const override {
    return {tier_.cache().resident(key) ? ExpertState::kFull : ExpertState::kMissed, where_};
  }
  CacheCounters counters() const override { return tier_.cache().counters(); }
  uint64_t capacity_experts() const override { return tier_.cache().config().total_capacity_experts(); }

 private:
  Tier tier_;
  MemoryTier where_;
};

class TwoTier final : public Residency {
 public:
  TwoTier(const PolicySpec& spec, const CacheConfig& device, const CacheConfig& host)
      : device_(spec, device, 0), host_(spec, host, 1) {}
  std::vector<PoolInfo> pools() const override {
    return {PoolInfo{"F@device", MemoryTier::kDevice, device_.cache().config().total_capacity_bytes()},
            PoolInfo{"F@host", MemoryTier::kHost, host_.cache().config().total_capacity_bytes()}};
  }
  std::string name() const override { return device_.cache().policy_name(); }
  void begin_invocation(uint32_t layer, bool decode) override {
    device_.cache().begin_invocation(layer, decode);
    host_.cache().begin_invocation(layer, decode);
    host_lookups_ = 0;
    for (uint32_t k : in_host_list_) in_host_[k] = 0;
    in_host_list_.clear();
  }
  LookupResult lookup(uint32_t key, uint32_t next_use, uint32_t) override {
    if (device_.lookup(key, next_use, listener_)) return {ExpertState::kFull, MemoryTier::kDevice};
    ++host_lookups_;
    if (in_host_.empty()) in_host_.assign(host_.cache().config().keys(), 0);
    in_host_[key] = 1;
    in_host_list_.push_back(key);
    if (host_.lookup(key, next_use, listener_)) {
      ++host_hits_;
      return {ExpertState::kFull, MemoryTier::kHost};
    }
    return {ExpertState::kMissed, MemoryTier::kDevice};
  }
  // Both tiers saw the lookup when the device missed it; only those see its refresh.
  void refresh(uint32_t key) override {
    device_.cache().refresh(key);
    if (!in_host_.empty() && in_host_[key]) host_.cache().refresh(key);
  }
  void end_invocation(uint32_t lookups) override {
    device_.end_invocation(lookups, listener_);
    host_.end_invocation(host_lookups_, listener_);
  }
  ExpertState prefetch(uint32_t layer, uint32_t key, uint32_t next_use, ExpertState* target) override {
    if (device_.cache().resident(key)) {
      *target = ExpertState::kFull;
      return ExpertState::kFull;
    }
    // Loaded from the SSD unless the host holds it; either way it lands in both tiers.
    host_.prefetch(layer, key, next_use, listener_);
    const bool in = device_.prefetch(layer, key, next_use, listener_);
    *target = in ? ExpertState::kFull : ExpertState::kMissed;
    return ExpertState::kMissed;
  }
  LookupResult peek(uint32_t key) const override {
    if (device_.cache().resident(key)) return {ExpertState::kFull, MemoryTier::kDevice};
    if (host_.cache().resident(key)) return {ExpertState::kFull, MemoryTier::kHost};
    return {ExpertState::kMissed, MemoryTier::kDevice};
  }
  CacheCounters counters() const override { return device_.cache().counters(); }
  uint64_t capacity_experts() const override { return device_.cache().config().total_capacity_experts(); }
  uint64_t host_hits() const { return host_hits_; }

 private:
  Tier device_, host_;
  uint32_t host_lookups_ = 0;
  uint64_t host_hits_ = 0;
  std::vector<uint8_t> in_host_;        // [keys] looked up in the host tier by this invocation
  std::vector<uint32_t> in_host_list_;  // those keys, to clear them
};

}  // namespace

std::unique_ptr<Residency> make_classic_residency(const PolicySpec& spec, const CacheConfig& cfg,
                                                  MemoryTier tier, const CacheConfig* host_cfg) {
  if (!host_cfg) return std::make_unique<SinglePool>(spec, cfg, tier);
  if (tier != MemoryTier::kDevice)
    throw Error("a host-memory cache tier needs a discrete GPU (device memory)");
  return std::make_unique<TwoTier>(spec, cfg, *host_cfg);
}

std::unique_ptr<Residency> make_run_expert_cache(const SystemBuildContext& ctx,
                                                 const PolicySpec& eviction_spec, RunResult& r) {
  const SystemConfig& cfg = ctx.cfg;
  const traces::TraceInfo& shape = ctx.info;
  CacheConfig cc = make_cache_config(shape.layers, shape.experts, shape.top_k, cfg.scope, cfg.budget,
                                     ctx.costs.costs.expert_bytes);
  cc.next_use_available = true;
  const std::vector<uint64_t> freq = key_frequencies(ctx.stream.key, cc.keys());
  cc.key_frequency = freq;
  std::optional<CacheConfig> host;
  if (cfg.host_budget_bytes > 0) {
    if (cfg.unified_memory)
      throw Error(
          "a host-memory tier (--host-budget) needs a discrete GPU; this hardware has unified memory");
    host = make_cache_config(shape.layers, shape.experts, shape.top_k, cfg.scope,
                             CacheCapacity{CacheCapacity::Unit::kBytes, cfg.host_budget_bytes},
                             ctx.costs.costs.expert_bytes);
    host->next_use_available = true;
    host->key_frequency = freq;
  }
  const MemoryTier tier = cfg.unified_memory ? MemoryTier::kUnified : MemoryTier::kDevice;
  auto residency = make_classic_residency(eviction_spec, cc, tier, host ? &*host : nullptr);
  r.cache_capacity_bytes = cc.total_capacity_bytes();
  r.cache_capacity_experts = cc.total_capacity_experts();
  return residency;
}

}  // namespace moesim::serving
