#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Arc, HandCheckedAdaptationOfP) {
  // capacity 3, lists MRU first, p = 0:
  //  1 2 3      T1 = 3 2 1 (full)
  //  1          hit: T1 = 3 2, T2 = 1
  //  4          case IV.B: REPLACE, |T1| = 2 > p = 0: 2 -> B1; T1 = 4 3
  //  2          case II (B1): p = 0 + max(|B2|/|B1| = 0, 1) = 1; REPLACE, |T1| = 2 > 1: 3 -> B1; T2 = 2 1
  //  5          case IV.B: REPLACE, |T1| = 1 = p (x not in B2): T2's LRU 1 -> B2; T1 = 5 4, T2 = 2
  //  1          case III (B2): p = 1 - max(|B1|/|B2| = 1, 1) = 0; REPLACE, |T1| = 2 > 0: 4 -> B1 = 4 3; T2 =
  //  1 2 2          hit: T2 = 2 1 3          case II (B1 = 4 3): p = 0 + max(0/2, 1) = 1; REPLACE, |T1| = 1 =
  //  p: 1 -> B2; T2 = 3 2, T1 = 5 5          hit in T1 (LRU would have evicted 5)
  auto r = run_pattern("arc", 8, 3, singles({1, 2, 3, 1, 4, 2, 5, 1, 2, 3, 5}));
  EXPECT_EQ(r.letters, "M M M H M M M M H M H");
  EXPECT_EQ(r.resident_after[4], (std::vector<uint32_t>{1, 3, 4}));
  EXPECT_EQ(r.resident_after[6], (std::vector<uint32_t>{2, 4, 5}));
  EXPECT_EQ(r.resident_after[9], (std::vector<uint32_t>{2, 3, 5}));
  EXPECT_EQ(r.counters.evictions, 5u);
}

TEST(Arc, NeverEvictsAKeyOfTheInvocation) {
  // capacity 2: {1} {2} fill T1 = 2 1; {1,3}: 1 moves to T2, 3 enters T1 = 3 2; REPLACE takes T1's LRU, 2.
  auto r = run_pattern("arc", 8, 2, {{1}, {2}, {1, 3}, {1, 3}}, 2);
  EXPECT_EQ(r.letters, "M M HM HH");
  EXPECT_EQ(r.resident_after[2], (std::vector<uint32_t>{1, 3}));
}

}  // namespace
}  // namespace moesim::testing
