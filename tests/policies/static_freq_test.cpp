#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(StaticFreq, PinsTheMostFrequentExperts) {
  // Whole-trace counts: 1:4, 3:3, 2:2, 4:1 -> capacity 2 pins {1, 3}.
  // 1 M (pinned), 2 M (room is free), 3 M (pinned; evicts the unpinned 2), 1 H, 1 H,
  // 2 M (passes through: the pinned keys fill the cache), 4 M (passes through), 3 H, 3 H, 1 H.
  auto r = run_pattern("static-freq", 8, 2, singles({1, 2, 3, 1, 1, 2, 4, 3, 3, 1}));
  EXPECT_EQ(r.letters, "M M M H H M M H H H");
  EXPECT_EQ(r.counters.over_capacity_invocations, 0u);  // pass-through by design, not degenerate
  for (size_t i = 2; i < r.resident_after.size(); ++i)
    EXPECT_EQ(r.resident_after[i], (std::vector<uint32_t>{1, 3})) << "after invocation " << i;
}

TEST(StaticFreq, FrequencyTiesGoToTheSmallerKey) {
  // Counts 1:3, 2:1, 3:1, 4:1; capacity 3 pins the top 3 with ties broken by key: {1, 2, 3}; 4 passes
  // through.
  auto r = run_pattern("static-freq", 8, 3, singles({1, 2, 3, 4, 1, 1}));
  EXPECT_EQ(r.letters, "M M M M H H");
  EXPECT_EQ(r.resident_after[3], (std::vector<uint32_t>{1, 2, 3}));
}

TEST(StaticFreq, NeedsFrequencies) {
  CacheConfig cfg = make_cache_config(1, 8, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 2}, {});
  EXPECT_THROW(make_eviction_policy("static-freq", cfg), Error);
}

TEST(StaticFreq, UnpinnedKeysUseFreeRoomInLruOrder) {
  // capacity 3, pinned keys come late: pinned = {1 (4 lookups), 2 (3), 3 (2)}; 7, 8, 9 are looked up once
  // each, first.
  // 7 8 9 fill the cache; 1 M evicts 7 (LRU unpinned); 2 M evicts 8; 3 M evicts 9; then 7 M passes through.
  auto r = run_pattern("static-freq", 10, 3, singles({7, 8, 9, 1, 2, 3, 1, 2, 1, 3, 2, 1}));
  EXPECT_EQ(r.letters, "M M M M M M H H H H H H");
  EXPECT_EQ(r.resident_after[2], (std::vector<uint32_t>{7, 8, 9}));
  EXPECT_EQ(r.resident_after[3], (std::vector<uint32_t>{1, 8, 9}));
  EXPECT_EQ(r.resident_after[5], (std::vector<uint32_t>{1, 2, 3}));
}

TEST(StaticFreq, RefreshOrdersTheUnpinnedKeys) {
  // capacity 3; whole-trace counts 5, 6, 7: 3 each (pinned), 0: 2, 1, 2, 3: 1. Before the pinned keys
  // arrive the unpinned ones use the room in LRU order: {0,1,2} with 0 refreshed leaves 1 the least recent,
  // so {3} evicts 1 and {0} hits (without the refresh {3} evicts 0 and {0} misses). The pinned keys then
  // push every unpinned key out.
  const Invocations invs = {{0, 1, 2}, {3}, {0}, {5, 6, 7}, {5, 6, 7}, {5, 6, 7}};
  auto r = run_pattern("static-freq", 8, 3, invs, 3, {{0}});
  EXPECT_EQ(r.letters, "MMM M H MMM HHH HHH");
  EXPECT_EQ(r.resident_after[3], (std::vector<uint32_t>{5, 6, 7}));
  EXPECT_EQ(run_pattern("static-freq", 8, 3, invs, 3).letters, "MMM M M MMM HHH HHH");
}

}  // namespace
}  // namespace moesim::testing
