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
// Structure: one indexed 4-ary max-heap per partition over the priorities (next(k) << 32 | k)
// (indexed_heap.h); a lookup re-keys the entry in place (O(log n)), keys of the current invocation found on
// top during eviction are set aside until end_invocation, so each eviction is O(log n) amortised. The replay
// fast path of one partition (`moesim replay --scope global`, or a single layer) runs the same rule over a
// next-use calendar instead (belady_calendar.h: the same victims, no sift on a hit); the heap serves the
// timed pipeline, per-layer partitions and any view whose next uses are not the stream's own.
#include "core/eviction.h"
#include "policies/eviction/belady_calendar.h"
#include "policies/eviction/indexed_heap.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

// Priorities are unique (the key is in the low bits), so the victim does not depend on the heap shape.
struct FurthestNextUse {
  static uint32_t key(uint64_t e) { return static_cast<uint32_t>(e); }
  static bool before(uint64_t a, uint64_t b) { return a > b; }
};

class Belady final : public EvictionPolicyBase<Belady> {
 public:
  explicit Belady(const CacheConfig& cfg)
      : EvictionPolicyBase(cfg), heap_(cfg.keys(), partition_bases(cfg)), stamps_(cfg.keys()) {}

  void begin_invocation(uint32_t) override { stamps_.next_epoch(); }
  void on_hit(uint32_t key, uint32_t part, uint32_t next_use) override {
    heap_.update(part, priority(key, next_use));
    stamps_.mark(key);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t next_use) override {
    heap_.push(part, priority(key, next_use));
    stamps_.mark(key);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override { return heap_.pop_not_in_use(part, stamps_); }
  void end_invocation(uint32_t part) override {
    heap_.restore_set_aside(part);
    stamps_.next_epoch();
  }

  CacheCounters replay(const LookupView& view) override {
    if (calendar_done_) throw Error("EvictionPolicy::replay needs a fresh policy instance");
    if (!calendar_tried_ && BeladyCalendar::applies(config(), view)) {
      calendar_tried_ = true;
      try {
        BeladyCalendar calendar(config(), view);
        const CacheCounters counters = replay_stream(calendar, config(), view);
        calendar_done_ = calendar.consistent_at_end();
        if (calendar_done_) return counters;
      } catch (const InconsistentNextUse&) {
      }
      // Not the stream's own next uses: the heap's answer, which is defined for any (this instance is fresh).
    }
    return EvictionPolicyBase::replay(view);
  }

 private:
  static uint64_t priority(uint32_t key, uint32_t next_use) { return uint64_t{next_use} << 32 | key; }

  // A 4-ary heap: every hit re-keys its entry towards the root, and a wider heap has half the levels.
  IndexedHeap<uint64_t, FurthestNextUse, 4> heap_;
  InUseStamps stamps_;
  // replay() ran the calendar (a second call then fails as EvictionPolicyBase::replay's does after the heap).
  bool calendar_tried_ = false, calendar_done_ = false;
};

}  // namespace

MOESIM_REGISTER(
    EvictionRegistry, "belady",
    "offline optimum (Belady 1966): evict the expert whose next use is furthest (needs the "
    "trace's next-use index)",
    {},
    [](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
      if (!cfg.next_use_available)
        throw Error(
            "eviction policy 'belady' is an offline oracle: it needs the next-use "
            "index of the lookup stream, which this caller does not provide");
      return std::make_unique<Belady>(cfg);
    },
    PolicyNeeds{.next_use = true});

}  // namespace moesim::policies
