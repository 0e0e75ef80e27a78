#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Belady, HandCheckedSequence) {
  // capacity 3, positions 0..9: 1 2 3 1 4 2 5 1 2 3
  // 4 @4: next uses 1->7, 2->5, 3->9 -> evict 3.   5 @6: 1->7, 2->8, 4->never -> evict 4.
  // 3 @9: 1, 2, 5 never used again -> ties go to the larger key -> evict 5.
  auto r = run_pattern("belady", 8, 3, singles({1, 2, 3, 1, 4, 2, 5, 1, 2, 3}));
  EXPECT_EQ(r.letters, "M M M H M H M H H M");
  EXPECT_EQ(r.resident_after.back(), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(r.counters.lookups - r.counters.hits, 6u);  // LRU misses 8 on the same sequence
}

TEST(Belady, NeverEvictsAKeyOfTheCurrentInvocation) {
  // capacity 2: {1} {2} {1,3} {2}: at the end of {1,3}, 1 and 3 are never used again and 2 is used next,
  // but 1 and 3 are in use, so 2 must go.
  auto r = run_pattern("belady", 8, 2, {{1}, {2}, {1, 3}, {2}});
  EXPECT_EQ(r.letters, "M M HM M");
}

TEST(Belady, NeedsTheNextUseIndex) {
  CacheConfig cfg = make_cache_config(1, 8, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 2}, {});
  EXPECT_THROW(make_eviction_policy("belady", cfg), Error);
  cfg.next_use_available = true;
  EXPECT_NO_THROW(make_eviction_policy("belady", cfg));
}

TEST(Belady, RefreshChangesNothing) {
  // capacity 3: after {0,1,2} (0 refreshed), 0 is next used by invocation 2 and 1, 2 never: {3,4} evicts 2
  // and 1 (never used again; ties to the larger key), with or without the refresh.
  const Invocations invs = {{0, 1, 2}, {3, 4}, {0, 3}};
  auto r = run_pattern("belady", 8, 3, invs, 2, {{0}});
  EXPECT_EQ(r.letters, "MMM MM HH");
  EXPECT_EQ(r.counters, run_pattern("belady", 8, 3, invs, 2).counters);
}

}  // namespace
}  // namespace moesim::testing
