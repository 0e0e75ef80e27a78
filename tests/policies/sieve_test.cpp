#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Sieve, HandCheckedSequence) {
  // capacity 3, queue head (newest) to tail: 3 2 1 after 1 2 3; 1 and 2 hit. 4: the hand clears 1 and 2 and
  // evicts 3, stopping at 4 (the next towards the head). 5: the hand is at 4 (bit 0): 4 goes, hand at 5.
  // 6: 5 goes (CLOCK would take the oldest, 1), so 1 hits.
  auto r = run_pattern("sieve", 8, 3, singles({1, 2, 3, 1, 2, 4, 5, 6, 1}));
  EXPECT_EQ(r.letters, "M M M H H M M M H");
  EXPECT_EQ(r.resident_after[5], (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_EQ(r.resident_after[7], (std::vector<uint32_t>{1, 2, 6}));
  EXPECT_EQ(r.counters.evictions, 3u);
}

TEST(Sieve, RetainedKeysKeepTheirPlace) {
  // capacity 3: 1 2 3, 1 hits. 4: 1 cleared, 2 goes, hand at 3. 2: 3 goes, hand at 4. 5: 4 goes. 1, 2 hit.
  // 3: the hand (at 2) clears 2 and finds 5 unvisited: 5 goes, although 1 and 2 are older.
  auto r = run_pattern("sieve", 8, 3, singles({1, 2, 3, 1, 4, 2, 5, 1, 2, 3}));
  EXPECT_EQ(r.letters, "M M M H M M M H H M");
  EXPECT_EQ(r.resident_after.back(), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(Sieve, PassesOverJustAdmittedKeysOfTheInvocation) {
  // capacity 2: {1} {1} then {2,3}: the hand clears 1, passes 2 and 3 (in use), wraps to the tail and
  // evicts 1. A sequential replay (2 fits, then 3) would have evicted 2.
  auto r = run_pattern("sieve", 8, 2, {{1}, {1}, {2, 3}, {2}});
  EXPECT_EQ(r.letters, "M H MM H");
  EXPECT_EQ(r.resident_after[2], (std::vector<uint32_t>{2, 3}));
}

}  // namespace
}  // namespace moesim::testing
