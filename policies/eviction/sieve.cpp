// SIEVE: Zhang, Yang, Yue, Vigfusson and Rashmi, "SIEVE is Simpler than LRU: an Efficient Turn-Key Eviction
// Algorithm for Web Caches", NSDI 2024 (the algorithm's pseudocode, Algorithm 1 / Figure 2 of the paper).
//
//   a FIFO queue (new objects at the head), a visited bit per object, a hand that persists across evictions
//   on hit(k):   visited(k) = 1
//   on admit(k): visited(k) = 0; insert k at the head
//   evict():     o = hand, or the tail when the hand is empty
//                while visited(o): visited(o) = 0; o = o.prev (towards the head), or the tail past the head
//                hand = o.prev; remove o
//
// Unlike CLOCK, a retained object keeps its place in the queue: the hand moves, the objects do not, so new
// objects near the head are sifted out quickly. As libCacheSim's Sieve.
//
// In-use protection (docs/architecture.md §4): the hand passes over a key of the current invocation whose bit
// is 0 (one just admitted) without evicting it; bits it meets are cleared as in a sequential replay. None
// when one full sweep after clearing finds only in-use keys. A refresh changes nothing (the lookup set the
// bit).
#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class Sieve final : public EvictionPolicyBase<Sieve> {
 public:
  explicit Sieve(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        lists_(cfg.keys(), cfg.partitions()),
        visited_(cfg.keys(), 0),
        hand_(cfg.partitions(), kNoKey),
        size_(cfg.partitions(), 0),
        stamps_(cfg.keys()) {}

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t, uint32_t) override {
    visited_[key] = 1;
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    visited_[key] = 0;
    lists_.push_front(part, key);
    ++size_[part];
    stamps_.mark(key);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    uint32_t o = hand_[part] != kNoKey ? hand_[part] : lists_.back(part);
    // Two sweeps at most: the first clears every bit it meets, the second finds a key unless all are in use.
    for (uint64_t steps = 2 * uint64_t{size_[part]} + 1; o != kNoKey && steps > 0; --steps) {
      if (visited_[o]) {
        visited_[o] = 0;
      } else if (!stamps_.in_use(o)) {
        hand_[part] = lists_.toward_front(o);
        lists_.unlink(o);
        --size_[part];
        return o;
      }
      o = lists_.toward_front(o);
      if (o == kNoKey) o = lists_.back(part);
    }
    return kNoKey;
  }
  void end_invocation(uint32_t) override { stamps_.next_epoch(); }

 private:
  KeyLists lists_;                // per partition: front = head (newest), back = tail
  std::vector<uint8_t> visited_;  // [keys]
  std::vector<uint32_t> hand_;    // [partitions] the next key the hand examines; kNoKey = start at the tail
  std::vector<uint32_t> size_;    // [partitions] keys in the queue
  InUseStamps stamps_;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "sieve",
                "SIEVE (Zhang et al., NSDI'24): FIFO queue, visited bits and a moving hand; retained experts "
                "keep their place",
                {}, [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                  return std::make_unique<Sieve>(cfg);
                });

}  // namespace moesim::policies
