#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Clock, HandCheckedSequence) {
  // capacity 3, the queue front (newest) to back: 1 2 3 -> 3 2 1; 1 hits (bit 1). 4: 1 gets its second chance
  // (bit cleared, to the front: 1 4 3 2), 2 goes. 2: 3 goes. 5: 4 goes (queue 5 2 1). 1, 2 hit. 3: 1 and 2
  // get second chances, 5 goes.
  auto r = run_pattern("clock", 8, 3, singles({1, 2, 3, 1, 4, 2, 5, 1, 2, 3}));
  EXPECT_EQ(r.letters, "M M M H M M M H H M");
  EXPECT_EQ(r.counters.evictions, 4u);
  EXPECT_EQ(r.resident_after.back(), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(Clock, TheHandMovesRetainedKeysToTheFrontUnlikeSieve) {
  // capacity 3: 1 2 3, 1 and 2 hit. 4: both get second chances (queue 2 1 4 after 3 goes). 5: 4 goes. 6: the
  // oldest, 1, goes (SIEVE's hand would take 5): 1 then misses.
  auto r = run_pattern("clock", 8, 3, singles({1, 2, 3, 1, 2, 4, 5, 6, 1}));
  EXPECT_EQ(r.letters, "M M M H H M M M M");
  EXPECT_EQ(r.resident_after[7], (std::vector<uint32_t>{2, 5, 6}));
}

TEST(Clock, PassesOverAJustAdmittedKeyOfTheInvocation) {
  // capacity 2: {1} {1} {2} then {3,2}: 1 (bit 1) gets its second chance, 2 (in use, bit 1) too, 3 (in use,
  // bit 0) is passed over, and 1 goes. A sequential replay (3, then 2) would have evicted 2.
  auto r = run_pattern("clock", 8, 2, {{1}, {1}, {2}, {3, 2}});
  EXPECT_EQ(r.letters, "M H M MH");
  EXPECT_EQ(r.resident_after.back(), (std::vector<uint32_t>{2, 3}));
}

TEST(Clock, HasNoParameters) {
  EXPECT_EQ(eviction_canonical_name("clock"), "clock");
  EXPECT_THROW(eviction_canonical_name("clock:bits=2"), Error);
}

}  // namespace
}  // namespace moesim::testing
