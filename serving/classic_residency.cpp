#include "serving/classic_residency.h"
namespace moesim::serving {
namespace {
class Single final : public Residency {
 public:
  Single(const std::string& spec, const CacheConfig& cfg, MemoryTier tier) : cache_(spec, cfg), tier_(tier) {}
  std::vector<PoolInfo> pools() const override { return {PoolInfo{"full-tensor pool", tier_, cache_.config().total_capacity_bytes()}}; }
  std::string name() const override { return cache_.policy_name(); }
  void begin_invocation(uint32_t layer, bool decode) override { layer_ = layer; cache_.begin_invocation(layer, decode); }
  LookupResult lookup(uint32_t key, uint32_t next_use, uint32_t) override {
    const bool hit = cache_.lookup(key, next_use);
    if (!hit) emit(MemoryEvent{MemoryEvent::Kind::kAdmit, 0, key, TensorPart::kWhole, bytes(key)});
    return LookupResult{hit ? ExpertState::kFull : ExpertState::kMissed, tier_};
  }
  void end_invocation(uint32_t lookups) override {
    ev_.clear();
    cache_.end_invocation(lookups, &ev_);
    for (uint32_t k : ev_) emit(MemoryEvent{MemoryEvent::Kind::kEvict, 0, k, TensorPart::kWhole, bytes(k)});
  }
  ExpertState prefetch(uint32_t, uint32_t key, uint32_t, ExpertState* target) override {
    *target = cache_.resident(key) ? ExpertState::kFull : ExpertState::kMissed;
    return *target;
  }
  LookupResult peek(uint32_t key) const override { return {cache_.resident(key) ? ExpertState::kFull : ExpertState::kMissed, tier_}; }
  CacheCounters counters() const override { return cache_.counters(); }
  uint64_t capacity_experts() const override { return cache_.config().total_capacity_experts(); }
 private:
  uint64_t bytes(uint32_t key) const { const auto& eb = cache_.config().expert_bytes; return eb.empty() ? 0 : eb[key / cache_.config().experts]; }
  ExpertCache cache_;
  MemoryTier tier_;
  uint32_t layer_ = 0;
  std::vector<uint32_t> ev_;
};
}  // namespace
std::unique_ptr<Residency> make_classic_residency(const std::string& spec, const CacheConfig& cfg, MemoryTier tier,
                                                  const CacheConfig*) {
  return std::make_unique<Single>(spec, cfg, tier);
}
}  // namespace moesim::serving
