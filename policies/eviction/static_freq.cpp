// Static frequency oracle: pins the experts that are looked up most often over the WHOLE trace.
//
//   offline: rank each partition's keys by total lookups (descending; ties by key id, ascending) and pin
//            the longest prefix of the ranking whose weights fit the partition's capacity (keys never
//            looked up are never pinned)
//   on lookup(k): a pinned k, once loaded, stays resident for the rest of the run; an unpinned k is
//                 admitted and kept in an LRU list, using whatever room the pinned keys leave
//   on refresh(k): an unpinned k moves to the front of the LRU list (pinned keys have no order)
//   evict(p):  the least recently used unpinned key not in use; pinned keys are never evicted while an
//              invocation is in progress. An invocation whose unpinned keys alone overflow the capacity is
//              over capacity (reported by the cache); its unpinned keys then pass through. Pinned keys are
//              evicted only if nothing else is left after the invocation, least frequent first (cannot
//              happen while the pinned set fits, which the ranking guarantees).
//
// It reads CacheConfig::key_frequency (whole-trace lookups per key); the factory throws without it.
#include <algorithm>

#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class StaticFreq final : public EvictionPolicyBase<StaticFreq> {
 public:
  explicit StaticFreq(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        lists_(cfg.keys(), cfg.partitions()),
        stamps_(cfg.keys()),
        pinned_(cfg.keys(), 0),
        pin_resident_(cfg.keys(), 0),
        pin_order_(cfg.partitions()) {
    const auto& freq = cfg.key_frequency;
    std::vector<uint32_t> ranked;
    for (uint32_t p = 0; p < cfg.partitions(); ++p) {
      ranked.clear();
      const uint32_t first = cfg.scope == CacheScope::kGlobal ? 0 : p * cfg.experts;
      const uint32_t last = cfg.scope == CacheScope::kGlobal ? cfg.keys() : first + cfg.experts;
      for (uint32_t k = first; k < last; ++k)
        if (freq[k] > 0) ranked.push_back(k);
      std::sort(ranked.begin(), ranked.end(),
                [&](uint32_t a, uint32_t b) { return freq[a] != freq[b] ? freq[a] > freq[b] : a < b; });
      uint64_t used = 0;
      for (uint32_t k : ranked) {
        if (used + cfg.key_weight[k] > cfg.capacity[p]) break;
        used += cfg.key_weight[k];
        pinned_[k] = 1;
        pin_order_[p].push_back(k);
      }
      std::reverse(pin_order_[p].begin(), pin_order_[p].end());  // least frequent first
    }
  }

  void begin_invocation(uint32_t) override {
    stamps_.next_epoch();
    in_invocation_ = true;
  }
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    if (!pinned_[key]) {
      lists_.unlink(key);
      lists_.push_front(part, key);
    }
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    if (pinned_[key])
      pin_resident_[key] = 1;
    else
      lists_.push_front(part, key);
    stamps_.mark(key);
  }
  void on_refresh(uint32_t key, uint32_t part) override {
    if (!pinned_[key]) {
      lists_.unlink(key);
      lists_.push_front(part, key);
    }
  }
  uint32_t evict(uint32_t part) override {
    const uint32_t v = lists_.back(part);
    if (v != kNoKey && !stamps_.in_use(v)) {
      lists_.unlink(v);
      return v;
    }
    if (in_invocation_) return kNoKey;
    for (uint32_t k : pin_order_[part])
      if (pin_resident_[k]) {
        pin_resident_[k] = 0;
        return k;
      }
    return kNoKey;
  }
  void end_invocation(uint32_t) override {
    stamps_.next_epoch();
    in_invocation_ = false;
  }

 private:
  KeyLists lists_;  // unpinned residents, LRU order
  InUseStamps stamps_;
  std::vector<uint8_t> pinned_, pin_resident_;
  std::vector<std::vector<uint32_t>> pin_order_;  // per partition, least frequent first
  bool in_invocation_ = false;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "static-freq",
                         "offline oracle: pins the experts most looked up over the whole trace; the others "
                         "share the remaining room in LRU order",
                         {}, [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                           if (cfg.key_frequency.size() != cfg.keys())
                             throw Error(
                                 "eviction policy 'static-freq' is an offline oracle: it needs whole-trace "
                                 "expert frequencies, which this caller does not provide");
                           return std::make_unique<StaticFreq>(cfg);
                         },
                         PolicyNeeds{.frequency = true});

}  // namespace moesim::policies
