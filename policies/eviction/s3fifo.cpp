// S3-FIFO: Yang, Zhang, Qiu, Yue and Rashmi, "FIFO queues are all you need for cache eviction", SOSP 2023,
// Algorithm 1. Three FIFO queues: a small one S (10% of the capacity), a main one M (the rest) and a ghost
// queue G of evicted keys only (as many entries as M):
//
//   on hit(x):   x.freq = min(x.freq + 1, 3)
//   on miss(x):  if x in G: insert x at the head of M (and drop it from G)  else: insert x at the head of S
//                x.freq = 0
//   evict():     if |M| > capacity of M (or S is empty): evictM()  else: evictS()
//   evictS():    while S is not empty: t = tail of S
//                  if t.freq >= 2 (the paper's "t.freq > 1"): move t to the head of M (M may now exceed its
//                     share: the next eviction then comes from M)
//                  else: insert t at the head of G (dropping G's tail while G is over its size);
//                        evict t; done
//   evictM():    while M is not empty: t = tail of M
//                  if t.freq > 0: t.freq = t.freq - 1; move t to the head of M   (FIFO-reinsertion)
//                  else: evict t; done
//
// Defaults follow libCacheSim's S3FIFO (fifo-size-ratio=0.10, ghost-size-ratio=0.90,
// move-to-main-threshold=2): the sizes are floor(ratio x capacity) in capacity units, and a key moved from S
// to M starts there with freq 0.
//
// In-use protection (docs/architecture.md §4): evictS passes over an in-use key whose freq is below the
// threshold (it may still be moved to M), evictM passes over an in-use key whose freq is 0; when the chosen
// queue holds only in-use keys the other one is tried; none when both do. A refresh changes nothing (it is
// not an access).
#include <algorithm>

#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

struct S3FifoParams {
  double small = 0.10, ghost = 0.90;
  uint32_t threshold = 2;
};

class S3Fifo final : public EvictionPolicyBase<S3Fifo> {
 public:
  S3Fifo(const CacheConfig& cfg, const S3FifoParams& p)
      : EvictionPolicyBase(cfg),
        threshold_(p.threshold),
        lists_(config().key_weight, cfg.partitions(), 3),
        freq_(cfg.keys(), 0),
        stamps_(cfg.keys()),
        parts_(cfg.partitions()) {
    for (uint32_t q = 0; q < cfg.partitions(); ++q) {
      const auto c = static_cast<double>(cfg.capacity[q]);
      parts_[q].main_cap = cfg.capacity[q] - static_cast<uint64_t>(c * p.small);
      parts_[q].ghost_cap = static_cast<uint64_t>(c * p.ghost);
    }
  }

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t, uint32_t) override {
    freq_[key] = static_cast<uint8_t>(std::min(freq_[key] + 1, 3));
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    if (lists_.where(key) == kG) {
      lists_.remove(part, key);
      lists_.push_front(part, kM, key);
    } else {
      lists_.push_front(part, kS, key);
    }
    freq_[key] = 0;
    stamps_.mark(key);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    const Part& q = parts_[part];
    const bool main_first = lists_.held(part, kM) > q.main_cap || lists_.held(part, kS) == 0;
    const uint32_t v = main_first ? evict_main(part) : evict_small(part);
    if (v != kNoKey) return v;
    return main_first ? evict_small(part) : evict_main(part);  // the first queue held only in-use keys
  }
  void end_invocation(uint32_t) override { stamps_.next_epoch(); }

 private:
  enum : uint8_t { kS = 0, kM = 1, kG = 2 };
  struct Part {
    uint64_t main_cap = 0, ghost_cap = 0;
  };

  uint32_t evict_small(uint32_t part) {
    for (uint32_t t = lists_.back(part, kS); t != kNoKey;) {
      const uint32_t next = lists_.toward_front(t);
      if (freq_[t] >= threshold_) {
        lists_.remove(part, t);
        lists_.push_front(part, kM, t);
        freq_[t] = 0;
      } else if (!stamps_.in_use(t)) {
        lists_.remove(part, t);
        lists_.push_front(part, kG, t);
        Part& q = parts_[part];
        while (lists_.held(part, kG) > q.ghost_cap) lists_.remove(part, lists_.back(part, kG));
        return t;
      }
      t = next;
    }
    return kNoKey;
  }
  uint32_t evict_main(uint32_t part) {
    for (uint32_t t = lists_.back(part, kM); t != kNoKey;) {
      uint32_t next = lists_.toward_front(t);
      if (freq_[t] > 0) {
        --freq_[t];
        lists_.to_front(part, t);
        if (next == kNoKey) next = t;  // t was the head: the sweep meets it again
      } else if (!stamps_.in_use(t)) {
        lists_.remove(part, t);
        return t;
      }
      t = next;
    }
    return kNoKey;
  }

  uint32_t threshold_;
  PartitionQueues lists_;      // S, M, G per partition; front = head (newest)
  std::vector<uint8_t> freq_;  // [keys] 0..3
  InUseStamps stamps_;
  std::vector<Part> parts_;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "s3fifo",
                "S3-FIFO (Yang et al., SOSP'23): small FIFO, main FIFO with reinsertion, ghost FIFO",
                {{"small", "0.1", "share of the capacity for the small FIFO queue S", ParamType::kReal,
                  ParamRange::closed_open(0, 1)},
                 {"ghost", "0.9", "capacity of the ghost queue G, as a share of the cache capacity",
                  ParamType::kReal, ParamRange::at_least(0)},
                 {"threshold", "2", "hits in S that move a key to M instead of evicting it",
                  ParamType::kWhole, ParamRange::closed(1, 3)}},
                [](const Params& p, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                  S3FifoParams s{p.get_double("small"), p.get_double("ghost"),
                                 static_cast<uint32_t>(p.get_uint("threshold"))};
                  return std::make_unique<S3Fifo>(cfg, s);
                });

}  // namespace moesim::policies
