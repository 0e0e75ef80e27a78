#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Lru, HandCheckedSequence) {
  // capacity 3: 1 2 3 1 4(evicts 2) 2(evicts 3) 5(evicts 1) 1(evicts 4) 2 3(evicts 5)
  auto r = run_pattern("lru", 8, 3, singles({1, 2, 3, 1, 4, 2, 5, 1, 2, 3}));
  EXPECT_EQ(r.letters, "M M M H M M M M H M");
  EXPECT_EQ(r.counters.evictions, 5u);
  EXPECT_EQ(r.resident_after.back(), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(Lru, InvocationOrderSetsRecency) {
  // {1,2}: 2 is more recent than 1. {3}: evicts 1. {1,3}: 1 misses, 3 hits, evicts 2 (the LRU key not in
  // use).
  auto r = run_pattern("lru", 8, 2, {{1, 2}, {3}, {1, 3}, {2}});
  EXPECT_EQ(r.letters, "MM M MH M");
  EXPECT_EQ(r.resident_after[2], (std::vector<uint32_t>{1, 3}));
}

TEST(Lru, HasNoParameters) {
  EXPECT_EQ(eviction_canonical_name("lru"), "lru");
  EXPECT_THROW(eviction_canonical_name("lru:seed=1"), Error);
}

TEST(Lru, RefreshMakesATouchedAgainKeyTheMostRecent) {
  // capacity 3. Invocation 0 touches 0, 1, 2, 0: lookups {0,1,2}, then 0 is refreshed, so the recency
  // order (oldest first) is 1, 2, 0. {3,4} evicts 1 and 2; {0,3} hits both. Without the refresh 0 and 1
  // would go and 0 would miss.
  auto r = run_pattern("lru", 8, 3, {{0, 1, 2}, {3, 4}, {0, 3}}, 2, {{0}});
  EXPECT_EQ(r.letters, "MMM MM HH");
  EXPECT_EQ(r.resident_after[1], (std::vector<uint32_t>{0, 3, 4}));
  EXPECT_EQ(run_pattern("lru", 8, 3, {{0, 1, 2}, {3, 4}, {0, 3}}, 2).letters, "MMM MM MH");
}

}  // namespace
}  // namespace moesim::testing
