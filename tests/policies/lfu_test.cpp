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

}  // namespace
}  // namespace moesim::testing
