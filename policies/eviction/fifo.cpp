// FIFO: evict the expert admitted longest ago; hits do not change the order.
//
//   on admit(k): push k at the front of its partition's queue;  on hit(k): nothing (k is in use)
//   on refresh(k): nothing (the queue is admission order; a refresh is not an admission)
//   evict(p):  walk from the back (oldest) towards the front, skipping in-use keys; unlink and return
//              the first key not in use; none when every key is in use
//
// The walk resumes where the previous eviction of the same invocation stopped (the skipped keys are in
// use, so they stay linked), so an invocation's evictions cost O(evictions + in-use keys) in total.
#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class Fifo final : public EvictionPolicyBase<Fifo> {
 public:
  explicit Fifo(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg), lists_(cfg.keys(), cfg.partitions()), stamps_(cfg.keys()) {}

  void begin_invocation(uint32_t) override {
    stamps_.next_epoch();
    skipped_ = kNoKey;
  }
  void on_hit(uint32_t key, uint32_t, uint32_t) override { stamps_.mark(key); }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    lists_.push_front(part, key);
    stamps_.mark(key);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    uint32_t v = skipped_ == kNoKey ? lists_.back(part) : lists_.toward_front(skipped_);
    while (v != kNoKey && stamps_.in_use(v)) {
      skipped_ = v;
      v = lists_.toward_front(v);
    }
    if (v != kNoKey) lists_.unlink(v);
    return v;
  }
  void end_invocation(uint32_t) override {
    stamps_.next_epoch();
    skipped_ = kNoKey;
  }

 private:
  KeyLists lists_;
  InUseStamps stamps_;
  uint32_t skipped_ = kNoKey;  // the in-use key nearest the front passed by this invocation's evictions
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "fifo", "first in, first out (admission order; hits do not refresh)", {},
                         [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                           return std::make_unique<Fifo>(cfg);
                         });

}  // namespace moesim::policies
