// CLOCK (second chance): Corbató, "A Paging Experiment with the Multics System", MIT Project MAC report
// MAC-M-384, 1968 (published in "In Honor of Philip M. Morse", MIT Press, 1969). The pages form a ring with a
// reference bit each; the hand sweeps from the oldest page. As libCacheSim's Clock (n-bit-counter=1), the
// ring is a queue and "the hand passes a page" is "the page moves to the front":
//
//   on hit(k):   ref(k) = 1
//   on admit(k): ref(k) = 0; k enters at the front
//   evict(p):    v = back (oldest); loop:
//                  if ref(v) == 1: ref(v) = 0; move v to the front (a second chance); continue
//                  else: unlink v and return it
//
// In-use protection (docs/architecture.md §4): a key of the current invocation whose bit is 0 (one just
// admitted) is passed over without being moved, so it stays where it is for the next sweep; a key whose bit
// is 1 is treated as above (its bit is cleared, as it would be in a sequential replay). None when every key
// of p is in use. A refresh changes nothing: the lookup already set the bit of a hit, and a refresh is not an
// access. A sweep is at most two passes (every bit it meets is cleared), O(1) amortized per lookup.
#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class Clock final : public EvictionPolicyBase<Clock> {
 public:
  explicit Clock(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        lists_(cfg.keys(), cfg.partitions()),
        ref_(cfg.keys(), 0),
        stamps_(cfg.keys()) {}

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t, uint32_t) override {
    ref_[key] = 1;
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    ref_[key] = 0;
    lists_.push_front(part, key);
    stamps_.mark(key);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    uint32_t v = lists_.back(part);
    while (v != kNoKey) {
      uint32_t next = lists_.toward_front(v);
      if (ref_[v]) {
        ref_[v] = 0;
        lists_.unlink(v);
        lists_.push_front(part, v);
        if (next == kNoKey) next = v;  // v was the front: the hand meets it again, its bit now clear
      } else if (!stamps_.in_use(v)) {
        lists_.unlink(v);
        return v;
      }
      v = next;
    }
    return kNoKey;
  }
  void end_invocation(uint32_t) override { stamps_.next_epoch(); }

 private:
  KeyLists lists_;            // per partition: the ring as a queue, front = newest
  std::vector<uint8_t> ref_;  // [keys] reference bit
  InUseStamps stamps_;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "clock",
                "CLOCK / second chance (Corbato 1968): a reference bit per expert, the hand clears it once",
                {}, [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                  return std::make_unique<Clock>(cfg);
                });

}  // namespace moesim::policies
