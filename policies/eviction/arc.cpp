// ARC: Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", FAST 2003, Figure 4.
// Cache size c; resident lists T1 (seen once recently) and T2 (seen at least twice); ghost lists B1, B2 of
// keys evicted from T1, T2; the target size p of T1 adapts to the ghost hits:
//
//   Case I   x in T1 or T2 (hit): move x to the MRU end of T2
//   Case II  x in B1 (miss): p = min(p + max(|B2|/|B1|, 1), c); REPLACE(x, p); move x to the MRU end of T2
//   Case III x in B2 (miss): p = max(p - max(|B1|/|B2|, 1), 0); REPLACE(x, p); move x to the MRU end of T2
//   Case IV  x in none (miss):
//     A: |T1| + |B1| = c:  if |T1| < c: delete the LRU key of B1; REPLACE(x, p)
//                           else:        delete the LRU key of T1 (it is not remembered in B1)
//     B: |T1| + |B1| < c:  if |T1| + |T2| + |B1| + |B2| >= c: (= 2c) delete the LRU key of B2
//                           REPLACE(x, p)
//     put x at the MRU end of T1
//   REPLACE(x, p): if |T1| >= 1 and (|T1| > p or (x in B2 and |T1| = p)): move the LRU key of T1 to the MRU
//                  end of B1; else move the LRU key of T2 to the MRU end of B2
//
// As libCacheSim's ARC, the directory is only maintained when the cache is full (cases II-IV replace nothing
// while it fills), sizes are weights in capacity units (the delta of p is max(ratio, 1) keys' weight), and
// case IV.A tests |T1| + |B1| + the new key > c.
//
// Invocation semantics (docs/architecture.md §4): the lookups of an invocation come first (hits move keys,
// misses adapt p and enter T1 or T2), its evictions after. Each miss is kept in admission order with the list
// it entered and the ghost list it came from; each eviction runs the case of the next miss that needed one
// (the misses of a cache not yet full need none), with |T1| and |T2| counted without the misses not yet
// processed, as a sequential replay would see them. The victim is the LRU key of the chosen list that is not
// in use; when that list holds only in-use keys the other resident list gives it; none when both do. A
// refresh moves the key to the MRU end of its list (it is not a second access: T1 stays T1).
#include <algorithm>

#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class Arc final : public EvictionPolicyBase<Arc> {
 public:
  explicit Arc(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        weight_(config().key_weight),
        lists_(config().key_weight, cfg.partitions(), 4),
        stamps_(cfg.keys()),
        parts_(cfg.partitions()) {
    for (uint32_t q = 0; q < cfg.partitions(); ++q) parts_[q].c = cfg.capacity[q];
    pending_.reserve(cfg.keys());
  }

  void begin_invocation(uint32_t) override {
    stamps_.next_epoch();
    pending_.clear();
    next_pending_ = 0;
    pend_w_[kT1] = pend_w_[kT2] = 0;
  }
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    lists_.remove(part, key);
    lists_.push_front(part, kT2, key);
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    Part& q = parts_[part];
    const uint8_t ghost = lists_.where(key);
    const auto w = static_cast<double>(weight_[key]);
    if (ghost == kB1) {
      q.p = std::min(q.p + std::max(static_cast<double>(lists_.held(part, kB2)) /
                                        static_cast<double>(lists_.held(part, kB1)),
                                    1.0) *
                               w,
                     static_cast<double>(q.c));
    } else if (ghost == kB2) {
      q.p = std::max(q.p - std::max(static_cast<double>(lists_.held(part, kB1)) /
                                        static_cast<double>(lists_.held(part, kB2)),
                                    1.0) *
                               w,
                     0.0);
    }
    if (ghost != kNone) lists_.remove(part, key);
    const uint8_t list = ghost == kNone ? kT1 : kT2;
    lists_.push_front(part, list, key);
    pending_.push_back({key, ghost, list});
    pend_w_[list] += weight_[key];
    stamps_.mark(key);
  }
  void on_refresh(uint32_t key, uint32_t part) override { lists_.to_front(part, key); }
  uint32_t evict(uint32_t part) override {
    Part& q = parts_[part];
    while (next_pending_ < pending_.size()) {
      const Miss m = pending_[next_pending_++];
      const uint64_t w = weight_[m.key];
      pend_w_[m.list] -= w;
      // As a sequential replay sees it: the lists without this miss and the ones after it.
      const uint64_t t1 = lists_.held(part, kT1) - pend_w_[kT1] - (m.list == kT1 ? w : 0);
      const uint64_t t2 = lists_.held(part, kT2) - pend_w_[kT2] - (m.list == kT2 ? w : 0);
      if (t1 + t2 + w <= q.c) continue;  // this miss found the cache not full: no eviction
      if (m.ghost != kNone) return replace(part, m.ghost == kB2, t1, t2);
      if (t1 + lists_.held(part, kB1) + w > q.c) {  // case IV.A
        if (lists_.held(part, kB1) > 0) {
          lists_.remove(part, lists_.back(part, kB1));
          return replace(part, false, t1, t2);
        }
        const uint32_t v = lists_.back_not_in_use(part, kT1, stamps_);
        if (v == kNoKey) return replace(part, false, t1, t2);
        lists_.remove(part, v);
        return v;
      }
      if (t1 + t2 + lists_.held(part, kB1) + lists_.held(part, kB2) >= 2 * q.c &&
          lists_.held(part, kB2) > 0)  // case IV.B
        lists_.remove(part, lists_.back(part, kB2));
      return replace(part, false, t1, t2);
    }
    // No miss left to account for (the pass-through after the invocation): REPLACE as for a new key.
    return replace(part, false, lists_.held(part, kT1), lists_.held(part, kT2));
  }
  void end_invocation(uint32_t) override {
    stamps_.next_epoch();
    pending_.clear();
    next_pending_ = 0;
    pend_w_[kT1] = pend_w_[kT2] = 0;
  }

 private:
  enum : uint8_t { kT1 = 0, kT2 = 1, kB1 = 2, kB2 = 3, kNone = PartitionQueues::kNone };
  struct Part {
    uint64_t c = 0;
    double p = 0;  // target weight of T1
  };
  struct Miss {
    uint32_t key;
    uint8_t ghost;  // kB1, kB2 or kNone: where the key was found
    uint8_t list;   // kT1 or kT2: where it entered
  };

  // REPLACE of Figure 4, with |T1| and |T2| as the sequential replay sees them; the victim goes to its ghost
  // list.
  uint32_t replace(uint32_t part, bool in_b2, uint64_t t1, uint64_t t2) {
    const double p = parts_[part].p;
    const auto t1d = static_cast<double>(t1);
    const bool from_t1 = (t1 > 0 && (t1d > p || (in_b2 && t1d == p))) || t2 == 0;
    uint8_t list = from_t1 ? kT1 : kT2;
    uint32_t v = lists_.back_not_in_use(part, list, stamps_);
    if (v == kNoKey) {
      list = from_t1 ? kT2 : kT1;
      v = lists_.back_not_in_use(part, list, stamps_);
      if (v == kNoKey) return kNoKey;
    }
    lists_.remove(part, v);
    lists_.push_front(part, list == kT1 ? kB1 : kB2, v);
    return v;
  }

  const std::vector<uint64_t>& weight_;  // config().key_weight
  PartitionQueues lists_;                // T1, T2, B1, B2 per partition; front = MRU
  InUseStamps stamps_;
  std::vector<Part> parts_;
  std::vector<Miss> pending_;  // this invocation's misses, in admission order
  size_t next_pending_ = 0;
  uint64_t pend_w_[2] = {0, 0};  // weights of the pending misses (not yet processed) that entered T1, T2
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "arc",
                "ARC (Megiddo & Modha, FAST'03): recency list T1 and frequency list T2 with ghosts B1, B2; "
                "the target size of T1 adapts",
                {}, [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                  return std::make_unique<Arc>(cfg);
                });

}  // namespace moesim::policies
