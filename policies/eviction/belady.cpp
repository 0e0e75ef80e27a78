// Belady (MIN, Belady 1966): evict the resident expert whose next use lies furthest in the future; experts
// never used again go first. The offline optimum for unit-size items and one request at a time; with
// invocations (several keys per request, none evictable while in use) it remains the furthest-next-use rule.
//
//   next(k) = invocation index of k's next lookup (LookupStream::next_use), kNoNextUse = never
//   on lookup(k): next(k) = the lookup's next_use
//   on refresh(k): nothing -- a refresh is a touch inside the same invocation, so k's next use is still the
//              next invocation that looks it up (the invocation is the unit of lookup: all of its experts
//              must be resident at once, so a position inside a later invocation carries no urgency)
//   evict(p):  the resident key of p, not in use, with the largest (next(k), k)  -- ties go to the larger
//              key, so results are deterministic and match tests/policies/belady_test.cpp's reference
//
// Structure: one indexed 4-ary max-heap per partition over the priorities (next(k) << 32 | k); a lookup
// re-keys the entry in place (O(log n)). Keys of the current invocation found on top during eviction are
// set aside and re-inserted at end_invocation, so each eviction is O(log n) amortised.
#include <algorithm>

#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class Belady final : public EvictionPolicyBase<Belady> {
 public:
  explicit Belady(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg),
        base_(partition_bases(cfg)),
        heap_(cfg.keys()),
        hpos_(cfg.keys()),
        size_(cfg.partitions(), 0),
        stamps_(cfg.keys()) {
    aside_.reserve(cfg.keys());
  }

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t part, uint32_t next_use) override {
    const uint32_t i = hpos_[key];
    const uint64_t old = heap_[i];
    heap_[i] = priority(key, next_use);
    if (heap_[i] > old)
      sift_up(base_[part], i);
    else
      sift_down(base_[part], size_[part], i);
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t next_use) override {
    const uint32_t i = base_[part] + size_[part]++;
    heap_[i] = priority(key, next_use);
    hpos_[key] = i;
    sift_up(base_[part], i);
    stamps_.mark(key);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    const uint32_t b = base_[part];
    while (size_[part] > 0) {
      const uint64_t top = heap_[b];
      pop(part);
      const auto k = static_cast<uint32_t>(top);
      if (!stamps_.in_use(k)) return k;
      aside_.push_back(top);
    }
    return kNoKey;
  }
  void end_invocation(uint32_t part) override {
    for (uint64_t e : aside_) {
      const uint32_t i = base_[part] + size_[part]++;
      heap_[i] = e;
      hpos_[static_cast<uint32_t>(e)] = i;
      sift_up(base_[part], i);
    }
    aside_.clear();
    stamps_.next_epoch();
  }

 private:
  // A 4-ary heap: fewer levels than a binary one, so a re-keyed entry (every hit moves its entry towards
  // the root) moves half as far; the four children of a node are adjacent (32 bytes). Priorities are unique
  // (the key is in the low bits), so the victim does not depend on the heap shape.
  static constexpr uint32_t kArity = 4;
  static uint64_t priority(uint32_t key, uint32_t next_use) { return uint64_t{next_use} << 32 | key; }

  void pop(uint32_t part) {
    const uint32_t b = base_[part];
    const uint32_t last = b + --size_[part];
    if (last != b) {
      heap_[b] = heap_[last];
      hpos_[static_cast<uint32_t>(heap_[b])] = b;
      sift_down(b, size_[part], b);
    }
  }
  void sift_up(uint32_t b, uint32_t i) {
    const uint64_t e = heap_[i];
    uint32_t r = i - b;
    while (r > 0) {
      const uint32_t parent = (r - 1) / kArity;
      const uint64_t pe = heap_[b + parent];
      if (pe >= e) break;
      heap_[b + r] = pe;
      hpos_[static_cast<uint32_t>(pe)] = b + r;
      r = parent;
    }
    heap_[b + r] = e;
    hpos_[static_cast<uint32_t>(e)] = b + r;
  }
  void sift_down(uint32_t b, uint32_t n, uint32_t i) {
    const uint64_t e = heap_[i];
    uint32_t r = i - b;
    for (;;) {
      const uint32_t first = kArity * r + 1;
      if (first >= n) break;
      uint32_t c = first;
      const uint32_t last = std::min(first + kArity, n);
      for (uint32_t x = first + 1; x < last; ++x)
        if (heap_[b + x] > heap_[b + c]) c = x;
      const uint64_t ce = heap_[b + c];
      if (ce <= e) break;
      heap_[b + r] = ce;
      hpos_[static_cast<uint32_t>(ce)] = b + r;
      r = c;
    }
    heap_[b + r] = e;
    hpos_[static_cast<uint32_t>(e)] = b + r;
  }

  std::vector<uint32_t> base_;
  std::vector<uint64_t> heap_;   // per partition region: a max-heap of priorities
  std::vector<uint32_t> hpos_;   // [keys] absolute heap index of a resident key
  std::vector<uint32_t> size_;   // [partitions]
  std::vector<uint64_t> aside_;  // in-use entries popped during this invocation's eviction
  InUseStamps stamps_;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, 
    "belady",
    "offline optimum (Belady 1966): evict the expert whose next use is furthest (needs the "
    "trace's next-use index)",
    {}, [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
      if (!cfg.next_use_available)
        throw Error(
            "eviction policy 'belady' is an offline oracle: it needs the next-use "
            "index of the lookup stream, which this caller does not provide");
      return std::make_unique<Belady>(cfg);
    },
    PolicyNeeds{.next_use = true});

}  // namespace moesim::policies
