// LRU: evict the least recently used expert.
//
//   on lookup(k) (hit or admission): move k to the front of its partition's list; mark k in use
//   on refresh(k) (k touched again in its invocation): move k to the front
//   evict(p):  v = back of p's list; if v is in use -> none (every key of p is in use: they are all
//              at the front, having just been looked up); else unlink v and return it
//
// O(1) per lookup and per eviction; lists are intrusive, in flat arrays indexed by key.
#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class Lru final : public EvictionPolicyBase<Lru> {
 public:
  explicit Lru(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg), lists_(cfg.keys(), cfg.partitions()), stamps_(cfg.keys()) {}

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    lists_.unlink(key);
    lists_.push_front(part, key);
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    lists_.push_front(part, key);
    stamps_.mark(key);
  }
  void on_refresh(uint32_t key, uint32_t part) override {
    lists_.unlink(key);
    lists_.push_front(part, key);
  }
  uint32_t evict(uint32_t part) override {
    const uint32_t v = lists_.back(part);
    if (v == kNoKey || stamps_.in_use(v)) return kNoKey;
    lists_.unlink(v);
    return v;
  }
  void end_invocation(uint32_t) override { stamps_.next_epoch(); }

 private:
  KeyLists lists_;
  InUseStamps stamps_;
};

}  // namespace

MOESIM_REGISTER(
    EvictionRegistry, "lru", "least recently used", {},
    [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
      return std::make_unique<Lru>(cfg);
    },
    PolicyNeeds{}, PolicyTraits{.recency_stack = true});

}  // namespace moesim::policies
