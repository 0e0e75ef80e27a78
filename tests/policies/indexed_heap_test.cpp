// The partitioned indexed heap shared by Belady and LFU history=1 (policies/eviction/indexed_heap.h): a
// worked example of the in-use set-aside, and a property against a brute-force reference (the best entry not
// in use of a partition, by a linear scan) over random pushes, re-keys and pops in several partitions and
// arities.
#include "policies/eviction/indexed_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace moesim::policies {
namespace {

// Entry = priority << 32 | key, the larger first (Belady's order): unique since the key is in it.
struct Largest {
  static uint32_t key(uint64_t e) { return static_cast<uint32_t>(e); }
  static bool before(uint64_t a, uint64_t b) { return a > b; }
};
uint64_t entry(uint32_t priority, uint32_t key) {
  return uint64_t{priority} << 32 | key;
}

struct KeySet {
  std::set<uint32_t> keys;
  bool in_use(uint32_t k) const { return keys.count(k) != 0; }
};

TEST(IndexedHeap, InUseEntriesAreSetAsideUntilRestored) {
  // One partition of keys 0..4 with priorities 50, 40, 30, 20, 10: 0 is the best. Keys 0 and 2 are in use.
  IndexedHeap<uint64_t, Largest, 4> heap(5, {0});
  for (uint32_t k = 0; k < 5; ++k) heap.push(0, entry(50 - 10 * k, k));
  const KeySet in_use{{0, 2}};
  EXPECT_EQ(heap.pop_not_in_use(0, in_use), 1u);  // 0 set aside
  EXPECT_EQ(heap.pop_not_in_use(0, in_use), 3u);  // 2 set aside
  EXPECT_EQ(heap.size(0), 1u);
  heap.restore_set_aside(0);
  EXPECT_EQ(heap.size(0), 3u);
  const KeySet none;
  EXPECT_EQ(heap.pop_not_in_use(0, none), 0u);
  EXPECT_EQ(heap.pop_not_in_use(0, none), 2u);
  EXPECT_EQ(heap.pop_not_in_use(0, none), 4u);
  EXPECT_EQ(heap.pop_not_in_use(0, none), kNoKey);
}

TEST(IndexedHeap, AllInUseGivesNoKeyAndLosesNothing) {
  IndexedHeap<uint64_t, Largest, 2> heap(3, {0});
  for (uint32_t k = 0; k < 3; ++k) heap.push(0, entry(k, k));
  EXPECT_EQ(heap.pop_not_in_use(0, KeySet{{0, 1, 2}}), kNoKey);
  heap.restore_set_aside(0);
  EXPECT_EQ(heap.size(0), 3u);
  EXPECT_EQ(heap.pop_not_in_use(0, KeySet{}), 2u);
}

TEST(IndexedHeap, UpdateMovesAnEntryBothWays) {
  IndexedHeap<uint64_t, Largest, 2> heap(4, {0});
  for (uint32_t k = 0; k < 4; ++k) heap.push(0, entry(10 + k, k));  // 3 is the best
  heap.update(0, entry(100, 0));                                    // 0 rises to the top
  EXPECT_EQ(heap.entry(0), entry(100, 0));
  heap.update(0, entry(1, 0));  // and sinks to the bottom
  heap.update(0, entry(0, 3));
  std::vector<uint32_t> order;
  for (uint32_t k; (k = heap.pop_not_in_use(0, KeySet{})) != kNoKey;) order.push_back(k);
  EXPECT_EQ(order, (std::vector<uint32_t>{2, 1, 0, 3}));
}

template <uint32_t Arity>
void check_against_reference(uint32_t seed) {
  constexpr uint32_t kParts = 3, kPerPart = 40;
  std::vector<uint32_t> bases(kParts);
  for (uint32_t p = 0; p < kParts; ++p) bases[p] = p * kPerPart;
  IndexedHeap<uint64_t, Largest, Arity> heap(kParts * kPerPart, bases);
  std::vector<std::map<uint32_t, uint64_t>> ref(kParts);  // key -> entry of the keys in the heap
  std::mt19937_64 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  for (int step = 0; step < 4000; ++step) {
    const uint32_t p = pick(kParts);
    auto& r = ref[p];
    const uint32_t op = pick(10);
    if (op < 4 && r.size() < kPerPart) {  // push an absent key of p
      uint32_t k;
      do k = p * kPerPart + pick(kPerPart);
      while (r.count(k));
      r[k] = entry(pick(1000), k);
      heap.push(p, r[k]);
    } else if (op < 7 && !r.empty()) {  // re-key a present key
      auto it = std::next(r.begin(), pick(static_cast<uint32_t>(r.size())));
      it->second = entry(pick(1000), it->first);
      heap.update(p, it->second);
      ASSERT_EQ(heap.entry(it->first), it->second);
    } else {  // an invocation of evictions with some keys of p in use
      KeySet in_use;
      for (const auto& [k, e] : r)
        if (pick(3) == 0) in_use.keys.insert(k);
      for (uint32_t n = pick(4); n-- > 0;) {
        uint32_t want = kNoKey;
        uint64_t best = 0;
        for (const auto& [k, e] : r)
          if (!in_use.in_use(k) && (want == kNoKey || Largest::before(e, best))) want = k, best = e;
        ASSERT_EQ(heap.pop_not_in_use(p, in_use), want) << "step " << step;
        if (want != kNoKey) r.erase(want);
      }
      heap.restore_set_aside(p);
    }
    ASSERT_EQ(heap.size(p), r.size());
  }
}

TEST(IndexedHeap, MatchesALinearScanReference) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    check_against_reference<2>(seed);
    check_against_reference<4>(seed);
    check_against_reference<3>(seed);
  }
}

}  // namespace
}  // namespace moesim::policies
