#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Fifo, HandCheckedSequence) {
  // capacity 3: 1 2 3 1(hit, no refresh) 4(evicts 1) 2(hit) 5(evicts 2) 1(evicts 3) 2(evicts 4) 3(evicts 5)
  auto r = run_pattern("fifo", 8, 3, singles({1, 2, 3, 1, 4, 2, 5, 1, 2, 3}));
  EXPECT_EQ(r.letters, "M M M H M H M M M M");
  EXPECT_EQ(r.resident_after.back(), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(Fifo, SkipsKeysOfTheCurrentInvocation) {
  // capacity 2: {1} {2} {1,3}: the oldest key is 1 but it is in use, so 2 goes; then {1} hits, {2} misses.
  auto r = run_pattern("fifo", 8, 2, {{1}, {2}, {1, 3}, {1}, {2}});
  EXPECT_EQ(r.letters, "M M HM H M");
  EXPECT_EQ(r.resident_after[2], (std::vector<uint32_t>{1, 3}));
}

TEST(Fifo, SeveralEvictionsInOneInvocationSkipInUseKeys) {
  // capacity 4: {1} {2} {3} {4}; then {1,2,5,6}: 1 and 2 (oldest) are in use, so 3 and 4 go.
  auto r = run_pattern("fifo", 8, 4, {{1}, {2}, {3}, {4}, {1, 2, 5, 6}, {3}});
  EXPECT_EQ(r.letters, "M M M M HHMM M");
  EXPECT_EQ(r.resident_after[4], (std::vector<uint32_t>{1, 2, 5, 6}));
}

TEST(Fifo, RefreshIsIgnored) {
  // capacity 3: {0,1,2} admitted in that order; refreshing 0 does not re-admit it, so {3,4} evicts 0 and 1
  // and {0,3} misses 0, with or without the refresh.
  auto r = run_pattern("fifo", 8, 3, {{0, 1, 2}, {3, 4}, {0, 3}}, 2, {{0}});
  EXPECT_EQ(r.letters, "MMM MM MH");
  EXPECT_EQ(r.resident_after[1], (std::vector<uint32_t>{2, 3, 4}));
}

}  // namespace
}  // namespace moesim::testing
