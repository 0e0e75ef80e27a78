// 2Q: Johnson and Shasha, "2Q: A Low Overhead High Performance Buffer Management Replacement Algorithm",
// VLDB 1994, the "Full Version" of Section 2 (pseudocode; Kin, Kout as tuned in Section 3: 25%, 50%). A1in
// is a FIFO of keys seen once, A1out a FIFO of the identifiers of keys paged out of A1in (no data), Am an LRU
// of keys seen again after they left A1in:
//
//   on access X:
//     if X in Am:    move X to the head of Am
//     elif X in A1out: reclaimfor(X); add X to the head of Am (and drop it from A1out)
//     elif X in A1in:  do nothing (a correlated reference)
//     else:            reclaimfor(X); add X to the head of A1in
//   reclaimfor(X): if there are free slots: use one
//                  elif |A1in| > Kin: page out the tail Y of A1in; add Y to the head of A1out;
//                                     if |A1out| > Kout: remove the identifier at the tail of A1out
//                  else: page out the tail of Am (not remembered in A1out)
//
// Sizes are weights in capacity units, Kin = floor(kin x capacity), Kout = floor(kout x capacity); the
// defaults are libCacheSim's TwoQ's (Ain-size-ratio=0.25, Aout-size-ratio=0.5).
//
// Invocation semantics (docs/architecture.md §4): an invocation's lookups come first, its evictions after;
// each eviction runs reclaimfor for the next miss that found the cache full, with |A1in| counted without the
// misses not yet processed (as a sequential replay sees it). The paged-out key is the tail key of its queue
// that is not in use; when that queue holds only in-use keys the other one gives it; none when both do. A
// refresh moves a key of Am to its head (recency) and leaves A1in alone (FIFO).
#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class TwoQ final : public EvictionPolicyBase<TwoQ> {
 public:
  TwoQ(const CacheConfig& cfg, double kin, double kout)
      : EvictionPolicyBase(cfg),
        weight_(config().key_weight),
        lists_(config().key_weight, cfg.partitions(), 3),
        stamps_(cfg.keys()),
        parts_(cfg.partitions()) {
    for (uint32_t q = 0; q < cfg.partitions(); ++q) {
      const auto c = static_cast<double>(cfg.capacity[q]);
      parts_[q].c = cfg.capacity[q];
      parts_[q].kin = static_cast<uint64_t>(c * kin);
      parts_[q].kout = static_cast<uint64_t>(c * kout);
    }
    pending_.reserve(cfg.keys());
  }

  void begin_invocation(uint32_t) override { start(); }
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    if (lists_.where(key) == kAm) lists_.to_front(part, key);
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    uint8_t list = kAin;
    if (lists_.where(key) == kAout) {
      lists_.remove(part, key);
      list = kAm;
    }
    lists_.push_front(part, list, key);
    pending_.push_back(key);
    if (list == kAin) pend_ain_ += weight_[key];
    pend_all_ += weight_[key];
    stamps_.mark(key);
  }
  void on_refresh(uint32_t key, uint32_t part) override {
    if (lists_.where(key) == kAm) lists_.to_front(part, key);
  }
  uint32_t evict(uint32_t part) override {
    Part& q = parts_[part];
    uint64_t ain = lists_.held(part, kAin);
    while (next_pending_ < pending_.size()) {
      const uint32_t k = pending_[next_pending_++];
      const uint64_t w = weight_[k];
      pend_all_ -= w;
      if (lists_.where(k) == kAin) pend_ain_ -= w;
      // As a sequential replay sees it: the queues without this miss and the ones after it.
      ain = lists_.held(part, kAin) - pend_ain_ - (lists_.where(k) == kAin ? w : 0);
      if (lists_.held(part, kAin) + lists_.held(part, kAm) - pend_all_ <= q.c)
        continue;  // this miss found a free slot
      break;
    }
    const uint8_t first = ain > q.kin ? kAin : kAm;
    uint32_t v = lists_.back_not_in_use(part, first, stamps_);
    if (v == kNoKey) v = lists_.back_not_in_use(part, first == kAin ? kAm : kAin, stamps_);
    if (v == kNoKey) return kNoKey;
    const bool to_out = lists_.where(v) == kAin;
    lists_.remove(part, v);
    if (to_out) {
      lists_.push_front(part, kAout, v);
      while (lists_.held(part, kAout) > q.kout) lists_.remove(part, lists_.back(part, kAout));
    }
    return v;
  }
  void end_invocation(uint32_t) override { start(); }

 private:
  enum : uint8_t { kAin = 0, kAm = 1, kAout = 2, kNone = PartitionQueues::kNone };
  struct Part {
    uint64_t c = 0, kin = 0, kout = 0;
  };

  void start() {
    stamps_.next_epoch();
    pending_.clear();
    next_pending_ = 0;
    pend_ain_ = pend_all_ = 0;
  }

  const std::vector<uint64_t>& weight_;  // config().key_weight
  PartitionQueues lists_;                // A1in, Am, A1out per partition; front = head (newest)
  InUseStamps stamps_;
  std::vector<Part> parts_;
  std::vector<uint32_t> pending_;  // this invocation's misses, in admission order
  size_t next_pending_ = 0;
  uint64_t pend_ain_ = 0, pend_all_ = 0;  // weights of the pending misses not yet processed (in A1in / all)
};

}  // namespace

MOESIM_REGISTER(
    EvictionRegistry, "2q",
    "2Q (Johnson & Shasha, VLDB'94): FIFO A1in for first references, its ghost FIFO A1out, LRU Am "
    "for re-references",
    {{"kin", "0.25", "Kin: share of the capacity A1in may hold before it gives the victims", ParamType::kReal,
      ParamRange::closed_open(0, 1)},
     {"kout", "0.5", "Kout: size of the ghost queue A1out, as a share of the capacity", ParamType::kReal,
      ParamRange::at_least(0)}},
    [](const Params& p, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
      const double kin = p.get_double("kin"), kout = p.get_double("kout");
      return std::make_unique<TwoQ>(cfg, kin, kout);
    });

}  // namespace moesim::policies
