// Random: evict a uniformly random resident expert that the current invocation does not use.
//
//   each partition keeps its resident keys in an array split as [ candidates | in use ]
//   on admit(k): append k (in the in-use zone);  on hit(k): swap k into the in-use zone
//   on refresh(k): nothing (k is already in the in-use zone; recency plays no part)
//   evict(p):  i = rng.below(#candidates); remove candidates[i] (the holes are refilled from the ends of
//              the zones, O(1)); none when there is no candidate
//   end of invocation: the in-use zone becomes candidates again
//
// Randomness: moesim::Rng seeded with the `seed` parameter; one stream per cache, so a run is a pure
// function of (trace, capacity, seed).
#include "base/rng.h"
#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class RandomEviction final : public EvictionPolicyBase<RandomEviction> {
 public:
  RandomEviction(const CacheConfig& cfg, uint64_t seed)
      : EvictionPolicyBase(cfg),
        rng_(seed),
        base_(partition_bases(cfg)),
        slots_(cfg.keys()),
        count_(cfg.partitions(), 0),
        in_use_(cfg.partitions(), 0) {}

  void begin_invocation(uint32_t) override {}
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    const uint32_t b = base_[part];
    const uint32_t last_candidate = b + count_[part] - in_use_[part] - 1;
    slots_.swap(slots_.slot_of(key), last_candidate);
    ++in_use_[part];
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    const uint32_t i = base_[part] + count_[part]++;
    slots_.put(i, key);
    ++in_use_[part];
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    const uint32_t candidates = count_[part] - in_use_[part];
    if (candidates == 0) return kNoKey;
    const uint32_t b = base_[part];
    const uint32_t i = b + static_cast<uint32_t>(rng_.below(candidates));
    const uint32_t v = slots_.at(i);
    slots_.move(b + candidates - 1, i);                     // last candidate fills the hole
    slots_.move(b + count_[part] - 1, b + candidates - 1);  // last in-use key fills the candidates' end
    --count_[part];
    return v;
  }
  void end_invocation(uint32_t part) override { in_use_[part] = 0; }

 private:
  Rng rng_;
  std::vector<uint32_t> base_;
  SlotArray slots_;
  std::vector<uint32_t> count_, in_use_;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "random", "evict a uniformly random resident expert (seeded)",
                {{"seed", "1", "seed of the random stream (moesim::Rng)", ParamType::kWhole}},
                [](const Params& p, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                  return std::make_unique<RandomEviction>(cfg, p.get_uint("seed"));
                });

}  // namespace moesim::policies
