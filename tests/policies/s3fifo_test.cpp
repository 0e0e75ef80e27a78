#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

// capacity 4 with small=0.25, ghost=0.5: S holds 1 key's share, M 3, the ghost G 2 (floor of share x 4).
const char* kSpec = "s3fifo:small=0.25,ghost=0.5";

TEST(S3Fifo, HandCheckedSmallMainAndGhostQueues) {
  // Queues head (newest) first.
  //  1 2 3 4        S = 4 3 2 1 (the cache is full)
  //  5              evictS: 1 (freq 0) goes to G = 1
  //  1              in G: enters M = 1; evictS: 2 goes, G = 2
  //  3 3            hits: freq(3) = 2
  //  6              evictS: 3 (freq 2 >= threshold) moves to M = 3 1 (freq 0); 4 goes, G = 4 2
  //  2              in G: M = 2 3 1, G = 4; evictS: 5 goes, G = 5 4
  //  7              evictS: 6 goes, G = 6 5 4 over its 2 -> G = 6 5
  //  4              not in G any more: S; evictS: 7 goes, G = 7 6
  //  1              hit: freq(1) = 1
  //  5              S; evictS: 4 goes, G = 4 7
  //  4              in G: M = 4 2 3 1 (over its 3); evictM: 1 (freq 1) is reinserted with freq 0, 3 goes
  //  3              evicted from M (not remembered): S; evictS: 5 goes
  auto r = run_pattern(kSpec, 10, 4, singles({1, 2, 3, 4, 5, 1, 3, 3, 6, 2, 7, 4, 1, 5, 4, 3}));
  EXPECT_EQ(r.letters, "M M M M M M H H M M M M H M M M");
  EXPECT_EQ(r.resident_after[14], (std::vector<uint32_t>{1, 2, 4, 5}));
  EXPECT_EQ(r.resident_after[15], (std::vector<uint32_t>{1, 2, 3, 4}));
}

TEST(S3Fifo, DefaultsAreLibCacheSims) {
  EXPECT_EQ(eviction_canonical_name("s3fifo"), "s3fifo:small=0.1,ghost=0.9,threshold=2");
  EXPECT_THROW(eviction_canonical_name("s3fifo:main=0.9"), Error);
  CacheConfig cfg = make_cache_config(1, 8, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 4}, {});
  EXPECT_THROW(make_eviction_policy("s3fifo:small=1", cfg), UsageError);
  EXPECT_THROW(make_eviction_policy("s3fifo:threshold=4", cfg), UsageError);
}

TEST(S3Fifo, SmallQueuePassesOverAnInUseKey) {
  // {1,2,3,4} fills S (4 3 2 1); {1,5}: 1 hits (freq 1 < 2, in use), so evictS passes it over and evicts 2.
  // A sequential replay would have evicted 1.
  auto r = run_pattern(kSpec, 10, 4, {{1, 2, 3, 4}, {1, 5}, {1}}, 4);
  EXPECT_EQ(r.letters, "MMMM HM H");
  EXPECT_EQ(r.resident_after[1], (std::vector<uint32_t>{1, 3, 4, 5}));
}

}  // namespace
}  // namespace moesim::testing
