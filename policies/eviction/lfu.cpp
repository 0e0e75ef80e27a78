// LFU: evict the least frequently used expert; ties go to the least recently used one.
//
//   history=0 (default, in-cache LFU, as libCacheSim's LFU):
//     count(k) = lookups of k since it was admitted (the count restarts when k is evicted and re-admitted)
//   history=1 ("perfect LFU", what several MoE replay tools call LFU):
//     count(k) = lookups of k since the start of the run, whether or not k was resident (counts survive
//     evictions)
//   on admit(k): ++count (history=0: count = 1);  on hit(k): ++count;  both make k the most recent
//   on refresh(k) (k touched again inside its invocation): k becomes the most recent; NOT an access, count
//                 unchanged (an invocation looks each expert up once, however many tokens use it)
//   evict(p):  the key of p with the smallest (count, last touch) that is not in use
//   (a prefetch admission counts as an access: the policy cannot tell it from a lookup)
//
// history=0, O(1) structure (Shah, Mitra, Matani 2010, "An O(1) algorithm for implementing the LFU cache
// eviction scheme"): per partition a list of frequency nodes in increasing count; each node holds an
// intrusive list of its keys, most recent at the front. A hit moves the key to the node of count+1 (created
// after its node when missing). Victim: the back key of the first node whose back key is not in use -- in-use
// keys entered their nodes during this invocation, so they sit at the front of each node and a node whose
// back key is in use holds only in-use keys.
//
// history=1: an admitted key enters with an arbitrary count, so the frequency nodes cannot be found in O(1);
// one indexed binary min-heap per partition over (count, last touch tick) instead, O(log n) per lookup,
// refresh and eviction (indexed_heap.h, shared with Belady); in-use keys popped during eviction are set
// aside and re-inserted at the end of the invocation.
#include <tuple>

#include "core/eviction.h"
#include "policies/eviction/indexed_heap.h"
#include "policies/eviction/key_lists.h"

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
  void on_refresh(uint32_t key, uint32_t) override {
    const uint32_t n = node_of_[key];  // in use keys stay at the front of their node
    keys_.unlink(key);
    keys_.push_front(n, key);
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

// Least (count, tick) first; ticks are unique, so are the priorities.
struct LfuEntry {
  uint64_t count = 0, tick = 0;
  uint32_t key = 0;
};
struct FewestThenOldest {
  static uint32_t key(const LfuEntry& e) { return e.key; }
  static bool before(const LfuEntry& a, const LfuEntry& b) {
    return std::tie(a.count, a.tick) < std::tie(b.count, b.tick);
  }
};

class LfuHistory final : public EvictionPolicyBase<LfuHistory> {
 public:
  explicit LfuHistory(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        heap_(cfg.keys(), partition_bases(cfg)),
        count_(cfg.keys(), 0),
        stamps_(cfg.keys()) {}

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    ++count_[key];
    touched(key, part);
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    ++count_[key];
    heap_.push(part, LfuEntry{count_[key], ++tick_, key});
    stamps_.mark(key);
  }
  void on_refresh(uint32_t key, uint32_t part) override { touched(key, part); }
  uint32_t evict(uint32_t part) override { return heap_.pop_not_in_use(part, stamps_); }
  void end_invocation(uint32_t part) override {
    heap_.restore_set_aside(part);
    stamps_.next_epoch();
  }

 private:
  // The key's count or recency went up: its entry moves away from the top.
  void touched(uint32_t key, uint32_t part) { heap_.update(part, LfuEntry{count_[key], ++tick_, key}); }

  IndexedHeap<LfuEntry, FewestThenOldest, 2> heap_;  // per partition: a min-heap on (count, tick)
  std::vector<uint64_t> count_;  // [keys] lookups since the start of the run (survive evictions)
  uint64_t tick_ = 0;            // touches so far: the recency order
  InUseStamps stamps_;
};

}  // namespace

MOESIM_REGISTER(
    EvictionRegistry, "lfu",
    "least frequently used (history=0: counts since admission; history=1: counts since the start, "
    "kept across evictions, \"perfect LFU\"); ties broken by recency (LRU)",
    {{"history", "0", "1: counts survive evictions (perfect LFU); 0: in-cache counts", ParamType::kWhole,
      ParamRange::closed(0, 1)}},
    [](const Params& p, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
      const uint64_t history = p.get_uint("history");
      if (history == 1) return std::make_unique<LfuHistory>(cfg);
      return std::make_unique<Lfu>(cfg);
    });

}  // namespace moesim::policies
