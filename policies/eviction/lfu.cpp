// LFU: evict the least frequently used expert; ties go to the least recently used one.
//
//   count(k) = lookups of k since it was admitted (in-cache LFU, as libCacheSim's LFU: the count restarts
//              when k is evicted and re-admitted)
//   on admit(k): count = 1;  on hit(k): ++count;  both make k the most recent of its count
//   evict(p):  the key of p with the smallest (count, last lookup time) that is not in use
//
// O(1) structure (Shah, Mitra, Matani 2010, "An O(1) algorithm for implementing the LFU cache eviction
// scheme"): per partition a list of frequency nodes in increasing count; each node holds an intrusive list of
// its keys, most recent at the front. A hit moves the key to the node of count+1 (created after its node when
// missing). Victim: the back key of the first node whose back key is not in use -- in-use keys entered their
// nodes during this invocation, so they sit at the front of each node and a node whose back key is in use
// holds only in-use keys.
#include "core/eviction.h"
#include "policies/eviction/eviction_structs.h"

namespace moesim::policies {
namespace {

class Lfu final : public EvictionPolicyBase<Lfu> {
 public:
  explicit Lfu(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        max_nodes_(cfg.keys() + 2),
        keys_(cfg.keys(), max_nodes_),
        node_of_(cfg.keys()),
        count_(max_nodes_ + cfg.partitions()),
        next_(max_nodes_ + cfg.partitions()),
        prev_(max_nodes_ + cfg.partitions()),
        stamps_(cfg.keys()) {
    // Node ids [0, max_nodes_) are allocatable; max_nodes_ + p is the sentinel of partition p's node list.
    for (uint32_t p = 0; p < cfg.partitions(); ++p)
      next_[max_nodes_ + p] = prev_[max_nodes_ + p] = max_nodes_ + p;
    free_.reserve(max_nodes_);
    for (uint32_t n = max_nodes_; n-- > 0;) free_.push_back(n);
  }

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t, uint32_t) override {
    const uint32_t n = node_of_[key];
    uint32_t target = next_[n];
    if (target >= max_nodes_ || count_[target] != count_[n] + 1) target = new_node_after(n, count_[n] + 1);
    keys_.unlink(key);
    keys_.push_front(target, key);
    node_of_[key] = target;
    if (keys_.empty(n)) free_node(n);
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    const uint32_t head = max_nodes_ + part;
    uint32_t target = next_[head];
    if (target >= max_nodes_ || count_[target] != 1) target = new_node_after(head, 1);
    keys_.push_front(target, key);
    node_of_[key] = target;
    stamps_.mark(key);
  }
  uint32_t evict(uint32_t part) override {
    for (uint32_t n = next_[max_nodes_ + part]; n < max_nodes_; n = next_[n]) {
      const uint32_t v = keys_.back(n);
      if (stamps_.in_use(v)) continue;  // the whole node is in use
      keys_.unlink(v);
      if (keys_.empty(n)) free_node(n);
      return v;
    }
    return kNoKey;
  }
  void end_invocation(uint32_t) override { stamps_.next_epoch(); }

 private:
  uint32_t new_node_after(uint32_t at, uint64_t count) {
    const uint32_t n = free_.back();
    free_.pop_back();
    count_[n] = count;
    const uint32_t after = next_[at];
    next_[n] = after;
    prev_[n] = at;
    prev_[after] = n;
    next_[at] = n;
    return n;
  }
  void free_node(uint32_t n) {
    next_[prev_[n]] = next_[n];
    prev_[next_[n]] = prev_[n];
    free_.push_back(n);
  }

  uint32_t max_nodes_;
  KeyLists keys_;                  // one key list per frequency node
  std::vector<uint32_t> node_of_;  // [keys]
  std::vector<uint64_t> count_;    // [nodes]
  std::vector<uint32_t> next_, prev_;
  std::vector<uint32_t> free_;
  InUseStamps stamps_;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "lfu", "least frequently used since admission; ties broken by recency (LRU)", {},
                         [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                           return std::make_unique<Lfu>(cfg);
                         });

}  // namespace moesim::policies
