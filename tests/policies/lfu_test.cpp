#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Lfu, HandCheckedSequence) {
  // capacity 3, counts in brackets:
  // 1 2 3 1[1:2] 4: {1:2,2:1,3:1} -> 2 and 3 tie, 2 is less recent -> evict 2
  // 2: {1:2,3:1,4:1} -> evict 3 (older than 4);  5: {1:2,4:1,2:1} -> evict 4;  1 hit [1:3];  2 hit [2:2]
  // 3: {1:3,2:2,5:1} -> evict 5
  auto r = run_pattern("lfu", 8, 3, singles({1, 2, 3, 1, 4, 2, 5, 1, 2, 3}));
  EXPECT_EQ(r.letters, "M M M H M M M H H M");
  EXPECT_EQ(r.resident_after.back(), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(Lfu, NeverEvictsAKeyOfTheCurrentInvocation) {
  // capacity 2: {1} {1} -> 1:2. {2} -> {1:2, 2:1}. {3,2}: 3:1 and 2:2 are in use, so 1 (count 2) goes
  // although 3 has the smallest count. Then {1} misses.
  auto r = run_pattern("lfu", 8, 2, {{1}, {1}, {2}, {3, 2}, {1}});
  EXPECT_EQ(r.letters, "M H M MH M");
  EXPECT_EQ(r.resident_after[3], (std::vector<uint32_t>{2, 3}));
}

TEST(Lfu, CountRestartsAfterEviction) {
  // capacity 2: 1 1 1 (1:3), 2 2 2 2 (2:4), 3 -> evicts 1 (3 < 4); 1 -> evicts 3, 1 restarts at count 1;
  // 4 -> evicts 1 (count 1 < 4; a perfect LFU remembering 1's 4 lookups would evict 2, the older of the tie).
  auto r = run_pattern("lfu", 8, 2, singles({1, 1, 1, 2, 2, 2, 2, 3, 1, 4, 1}));
  EXPECT_EQ(r.letters, "M H H M H H H M M M M");
  EXPECT_EQ(r.resident_after[9], (std::vector<uint32_t>{2, 4}));
}

TEST(Lfu, RefreshSetsRecencyButIsNoAccess) {
  // capacity 3: {0,1,2} all count 1; refreshing 0 makes it the most recent of count 1, so {3,4} evicts 1
  // and 2 (the least recent of the lowest count) and {0,3} hits both. Without it 0 and 1 go.
  auto r = run_pattern("lfu", 8, 3, {{0, 1, 2}, {3, 4}, {0, 3}}, 2, {{0}});
  EXPECT_EQ(r.letters, "MMM MM HH");
  EXPECT_EQ(run_pattern("lfu", 8, 3, {{0, 1, 2}, {3, 4}, {0, 3}}, 2).letters, "MMM MM MH");
  // Not an access: capacity 2, {2} {2} [2:2], {1} touched twice [1:1]; {3} evicts 1 (1 < 2). A counted
  // refresh would tie 1 and 2 at 2 and evict the less recent 2.
  auto c = run_pattern("lfu", 8, 2, {{2}, {2}, {1}, {3}, {1}}, 1, {{}, {}, {1}});
  EXPECT_EQ(c.letters, "M H M M M");
  EXPECT_EQ(c.resident_after[3], (std::vector<uint32_t>{2, 3}));
}

TEST(LfuHistory, CountsSurviveEviction) {
  // The sequence of CountRestartsAfterEviction with history=1, capacity 2, counts in brackets:
  // 1 1 1 [1:3]  2 2 2 2 [2:4]  3 [3:1] evicts 1 (3 < 4)  1 [1:4] evicts 3 (1 < 4)
  // 4 [4:1]: 1 and 2 tie at 4, 2 is the least recently touched -> evicts 2 (in-cache LFU evicts 1)
  // 1 hits.
  auto r = run_pattern("lfu:history=1", 8, 2, singles({1, 1, 1, 2, 2, 2, 2, 3, 1, 4, 1}));
  EXPECT_EQ(r.letters, "M H H M H H H M M M H");
  EXPECT_EQ(r.resident_after[7], (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(r.resident_after[8], (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(r.resident_after[9], (std::vector<uint32_t>{1, 4}));
}

TEST(LfuHistory, RefreshAndInUseProtection) {
  // The refresh scenario of Lfu.RefreshSetsRecencyButIsNoAccess: same result with history=1.
  EXPECT_EQ(run_pattern("lfu:history=1", 8, 3, {{0, 1, 2}, {3, 4}, {0, 3}}, 2, {{0}}).letters, "MMM MM HH");
  // capacity 2: {1} {1} [1:2]; {2} [2:1]; {3,2}: 3 [3:1] and 2 [2:2] are in use, 1 [1:2] goes. {1} misses
  // and comes back with 1:3, so 3 [3:1] goes; {4} [4:1] evicts 2 [2:2] and {1} hits. (In-cache LFU restarts
  // 1 at count 1, evicts it at {4} and misses it at the end.)
  auto r = run_pattern("lfu:history=1", 8, 2, {{1}, {1}, {2}, {3, 2}, {1}, {4}, {1}}, 2);
  EXPECT_EQ(r.letters, "M H M MH M M H");
  EXPECT_EQ(r.resident_after[4], (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(r.resident_after[5], (std::vector<uint32_t>{1, 4}));
  EXPECT_EQ(run_pattern("lfu", 8, 2, {{1}, {1}, {2}, {3, 2}, {1}, {4}, {1}}, 2).letters, "M H M MH M M M");
}

TEST(LfuHistory, ParameterIsChecked) {
  EXPECT_EQ(eviction_canonical_name("lfu"), "lfu:history=0");
  EXPECT_EQ(eviction_canonical_name("lfu:history=1"), "lfu:history=1");
  const CacheConfig cfg = make_cache_config(1, 4, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 2}, {});
  EXPECT_THROW((void)make_eviction_policy("lfu:history=2", cfg), Error);
}

}  // namespace
}  // namespace moesim::testing
