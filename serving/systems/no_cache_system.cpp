// no-cache: nothing stays resident, every lookup misses and reads the expert whole from the SSD. The floor
// every cache is measured against, and the smallest system: a residency and a registry entry.
#include "serving/system.h"

namespace moesim::serving {
namespace {

class NoCacheResidency final : public Residency {
 public:
  explicit NoCacheResidency(MemoryTier tier) : tier_(tier) {}
  std::vector<PoolInfo> pools() const override { return {}; }
  std::string name() const override { return "none"; }
  void begin_invocation(uint32_t, bool decode) override {
    decode_ = decode;
    ++counters_.invocations;
  }
  LookupResult lookup(uint32_t, uint32_t, uint32_t) override {
    ++counters_.lookups;
    counters_.decode_lookups += decode_ ? 1 : 0;
    return {ExpertState::kMissed, tier_};
  }
  void refresh(uint32_t) override {}
  void end_invocation(uint32_t) override {}
  ExpertState prefetch(uint32_t, uint32_t, uint32_t, ExpertState* target) override {
    *target = ExpertState::kMissed;  // nowhere to keep it: every prefetch is declined
    return ExpertState::kMissed;
  }
  LookupResult peek(uint32_t) const override { return {ExpertState::kMissed, tier_}; }
  CacheCounters counters() const override { return counters_; }
  uint64_t capacity_experts() const override { return 0; }

 private:
  MemoryTier tier_;
  bool decode_ = false;
  CacheCounters counters_;
};

class NoCache final : public System {
 public:
  std::unique_ptr<Residency> build(const SystemBuildContext& ctx, const PolicySpec&, PipelineOptions&,
                                   RunResult&) const override {
    return std::make_unique<NoCacheResidency>(ctx.cfg.unified_memory ? MemoryTier::kUnified
                                                                     : MemoryTier::kDevice);
  }
};

}  // namespace

MOESIM_REGISTER(SystemRegistry, "no-cache",
                "every lookup misses: each expert is read whole from the SSD at every use", {},
                [](const Params&) -> std::unique_ptr<System> { return std::make_unique<NoCache>(); });

}  // namespace moesim::serving
