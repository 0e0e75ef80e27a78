#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(TwoQ, HandCheckedA1inA1outAm) {
  // capacity 4: Kin = 1, Kout = 2 (the defaults 25% and 50%); queues head (newest) first.
  //  1 2 3 4   A1in = 4 3 2 1 (full)
  //  5         |A1in| = 4 > Kin: page out 1, A1out = 1
  //  1         in A1out: reclaim (2 out, A1out = 2), 1 to Am
  //  2         in A1out: reclaim (3 out, A1out = 3), Am = 2 1
  //  6         reclaim: 4 out, A1out = 4 3; A1in = 6 5
  //  1         hit in Am: Am = 1 2
  //  3         in A1out: reclaim (5 out, A1out = 5 4), Am = 3 1 2
  //  7         |A1in| = 1 = Kin: page out Am's tail, 2 (not remembered)
  //  4         in A1out: reclaim (|A1in| = 2: 6 out, A1out = 6 5), Am = 4 3 1
  //  2         not remembered (it left Am): A1in = 2 7; |A1in| = 1 = Kin: Am's tail 1 goes
  //  5         in A1out: Am = 5 4 3, A1out = 6; |A1in| = 2 > Kin: 7 out, A1out = 7 6
  auto r = run_pattern("2q", 10, 4, singles({1, 2, 3, 4, 5, 1, 2, 6, 1, 3, 7, 4, 2, 5}));
  EXPECT_EQ(r.letters, "M M M M M M M M H M M M M M");
  EXPECT_EQ(r.resident_after[9], (std::vector<uint32_t>{1, 2, 3, 6}));
  EXPECT_EQ(r.resident_after[11], (std::vector<uint32_t>{1, 3, 4, 7}));
  EXPECT_EQ(r.resident_after[13], (std::vector<uint32_t>{2, 3, 4, 5}));
}

TEST(TwoQ, CorrelatedReferencesInA1inDoNotPromote) {
  // capacity 4: 1 is looked up twice while in A1in (a correlated reference): it stays in A1in and is paged
  // out in FIFO order, so it comes back through A1out into Am.
  auto r = run_pattern("2q", 10, 4, singles({1, 1, 2, 3, 4, 5, 1, 1}));
  EXPECT_EQ(r.letters, "M H M M M M M H");
  EXPECT_EQ(r.resident_after[5], (std::vector<uint32_t>{2, 3, 4, 5}));
}

TEST(TwoQ, Parameters) {
  EXPECT_EQ(eviction_canonical_name("2q"), "2q:kin=0.25,kout=0.5");
  CacheConfig cfg = make_cache_config(1, 8, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 4}, {});
  EXPECT_THROW(make_eviction_policy("2q:kin=1", cfg), UsageError);
  EXPECT_THROW(make_eviction_policy("2q:kout=-1", cfg), UsageError);
}

}  // namespace
}  // namespace moesim::testing
