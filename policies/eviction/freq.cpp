// Freq: ZipMoE's in-pool eviction (ZipMoE §3.4, "Pool Dispatching": a full pool evicts its expert of the
// lowest activation frequency), usable by any cache.
//
//   count(k) = lookups of k since the start of the run, resident or not (counts survive evictions, so an
//              expert that leaves and comes back keeps its history, as the paper's runtime frequency list)
//   first(k) = the order of k's first lookup
//   on admit(k) / on hit(k): ++count(k); first(k) is set on the first one; k is in use
//   on refresh(k): nothing (a duplicate touch inside an invocation is not an activation)
//   evict(p):  among p's resident keys not in use, the one with the smallest count; ties: the latest first
//              lookup (the worse frequency rank, ZipMoE's order breaks count ties by first activation)
//   (a prefetch admission counts as a lookup: the policy cannot tell it from one)
//
// O(resident keys of p) per eviction: a scan of the partition's slot region, which suits ZipMoE's pools (one
// layer's experts); counts and first lookups are flat arrays indexed by key.
#include <limits>

#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

constexpr uint64_t kNotSeen = std::numeric_limits<uint64_t>::max();

class Freq final : public EvictionPolicyBase<Freq> {
 public:
  explicit Freq(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        base_(partition_bases(cfg)),
        size_(cfg.partitions(), 0),
        slots_(cfg.keys()),
        count_(cfg.keys(), 0),
        first_(cfg.keys(), kNotSeen),
        stamps_(cfg.keys()) {}

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t, uint32_t) override { activate(key); }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    slots_.put(base_[part] + size_[part]++, key);
    activate(key);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    const uint32_t b = base_[part];
    uint32_t best = kNoKey, at = 0;
    for (uint32_t i = b; i < b + size_[part]; ++i) {
      const uint32_t k = slots_.at(i);
      if (stamps_.in_use(k)) continue;
      if (best == kNoKey || count_[k] < count_[best] || (count_[k] == count_[best] && first_[k] > first_[best])) {
        best = k;
        at = i;
      }
    }
    if (best == kNoKey) return kNoKey;
    slots_.move(b + --size_[part], at);
    return best;
  }
  void end_invocation(uint32_t) override { stamps_.next_epoch(); }

 private:
  void activate(uint32_t key) {
    ++count_[key];
    if (first_[key] == kNotSeen) first_[key] = seen_++;
    stamps_.mark(key);
  }

  std::vector<uint32_t> base_, size_;
  SlotArray slots_;
  std::vector<uint64_t> count_, first_;
  InUseStamps stamps_;
  uint64_t seen_ = 0;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "freq",
                "ZipMoE's in-pool rule: the lowest activation count since the start (ties: the latest first "
                "lookup)",
                {}, [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                  return std::make_unique<Freq>(cfg);
                });

}  // namespace moesim::policies
