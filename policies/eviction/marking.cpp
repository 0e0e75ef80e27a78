// Marking: the randomized marking algorithm of Fiat, Karp, Luby, McGeoch, Sleator and Young ("Competitive
// paging algorithms", J. Algorithms 1991), 2*H_k-competitive.
//
//   the algorithm runs in phases; every requested item is marked
//   on a miss with the cache full: if every resident item is marked, a new phase starts: unmark all;
//                                  evict a uniformly random UNMARKED item
//
// Invocation semantics (docs/architecture.md §4): eviction happens after the invocation's admissions, so "a
// miss with the cache full" is "the invocation left the cache over capacity"; a new phase unmarks every key
// except the current invocation's (they are the first requests of the new phase and are protected anyway).
//
// A refresh (a key touched again inside its invocation) changes nothing: the key is already requested,
// hence marked, in this phase.
//
// Each partition keeps its resident keys in an array split into three zones
//   [ unmarked | marked, not in use | in use (marked) ]
// so that marking, the phase reset (move a zone boundary) and a uniform unmarked victim are all O(1).
// Randomness: moesim::Rng seeded with the `seed` parameter.
#include "base/rng.h"
#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class Marking final : public EvictionPolicyBase<Marking> {
 public:
  Marking(const CacheConfig& cfg, uint64_t seed)
      : EvictionPolicyBase(cfg),
        rng_(seed),
        base_(partition_bases(cfg)),
        slots_(cfg.keys()),
        zones_(cfg.partitions()) {}

  void begin_invocation(uint32_t) override {}
  void on_hit(uint32_t key, uint32_t part, uint32_t) override {
    Zones& z = zones_[part];
    const uint32_t b = base_[part];
    uint32_t i = slots_.slot_of(key);
    if (i < b + z.unmarked) {  // unmarked -> first slot of the marked zone
      slots_.swap(i, b + z.unmarked - 1);
      i = b + --z.unmarked;
      ++z.marked;
    }
    // marked -> first slot of the in-use zone
    slots_.swap(i, b + z.unmarked + z.marked - 1);
    --z.marked;
    ++z.in_use;
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t) override {
    Zones& z = zones_[part];
    const uint32_t i = base_[part] + z.unmarked + z.marked + z.in_use++;
    slots_.put(i, key);
  }
  void on_refresh(uint32_t, uint32_t) override {}
  uint32_t evict(uint32_t part) override {
    Zones& z = zones_[part];
    if (z.unmarked == 0) {  // every evictable key is marked: a new phase
      z.unmarked = z.marked;
      z.marked = 0;
      ++phases_;
      if (z.unmarked == 0) return kNoKey;
    }
    const uint32_t b = base_[part];
    const uint32_t i = b + static_cast<uint32_t>(rng_.below(z.unmarked));
    const uint32_t v = slots_.at(i);
    // Close the hole zone by zone: last unmarked -> hole, last marked -> its slot, last in-use -> its slot.
    slots_.move(b + z.unmarked - 1, i);
    slots_.move(b + z.unmarked + z.marked - 1, b + z.unmarked - 1);
    slots_.move(b + z.unmarked + z.marked + z.in_use - 1, b + z.unmarked + z.marked - 1);
    --z.unmarked;
    return v;
  }
  void end_invocation(uint32_t part) override {
    Zones& z = zones_[part];
    z.marked += z.in_use;
    z.in_use = 0;
  }

 private:
  struct Zones {
    uint32_t unmarked = 0, marked = 0, in_use = 0;
  };

  Rng rng_;
  std::vector<uint32_t> base_;
  SlotArray slots_;
  std::vector<Zones> zones_;
  uint64_t phases_ = 0;
};

}  // namespace

MOESIM_REGISTER(EvictionRegistry, "marking",
                "randomized marking (Fiat et al. 1991): phases, evict a random unmarked expert",
                {{"seed", "1", "seed of the random stream (moesim::Rng)", ParamType::kWhole}},
                [](const Params& p, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
                  return std::make_unique<Marking>(cfg, p.get_uint("seed"));
                });

}  // namespace moesim::policies
