// The OS page cache of a buffered run (sim/page_cache.h).
#include "sim/page_cache.h"

#include <gtest/gtest.h>

namespace moesim::sim {
namespace {

TEST(PageCache, ASecondReadOfTheSameBytesHits) {
  PageCache c(100);
  EXPECT_FALSE(c.access(1, 40));
  EXPECT_TRUE(c.access(1, 40));
  EXPECT_EQ(c.hits(), 1u);
  EXPECT_EQ(c.misses(), 1u);
  EXPECT_EQ(c.used(), 40u);
}

TEST(PageCache, EvictsTheLeastRecentlyUsedAtCapacity) {
  PageCache c(100);
  c.access(1, 40);
  c.access(2, 40);
  EXPECT_TRUE(c.access(1, 40));   // 1 is now the most recent
  EXPECT_FALSE(c.access(3, 40));  // 120 > 100: 2, the least recently used, goes
  EXPECT_TRUE(c.resident(1));
  EXPECT_FALSE(c.resident(2));
  EXPECT_TRUE(c.resident(3));
  EXPECT_EQ(c.used(), 80u);
}

TEST(PageCache, NothingStaysWithoutCapacityAndAReadLargerThanItIsNotKept) {
  PageCache none(0);
  EXPECT_FALSE(none.access(1, 1));
  EXPECT_FALSE(none.access(1, 1));
  PageCache small(100);
  small.access(1, 60);
  EXPECT_FALSE(small.access(2, 101));
  EXPECT_FALSE(small.resident(2));
  EXPECT_TRUE(small.resident(1));  // not evicted for a read that could never fit
}

TEST(PageCache, KeysTellPartsAndShardsApart) {
  Op a;
  a.layer = 3;
  a.expert = 7;
  a.tensor = 1;
  Op b = a;
  b.part = TensorPart::kE;
  Op c = b;
  c.shard = 2;
  EXPECT_NE(page_cache_key(a), page_cache_key(b));
  EXPECT_NE(page_cache_key(b), page_cache_key(c));
  Op d = a;
  d.expert = 8;
  EXPECT_NE(page_cache_key(a), page_cache_key(d));
}

TEST(PageCache, CapacityIsTheDramThePoolsLeave) {
  // Unified memory: 64 GiB less the 8 GiB budget, 1 GiB of host tier and 2 GiB of dense weights.
  const uint64_t G = 1ull << 30;
  EXPECT_EQ(page_cache_capacity(64 * G, true, 8 * G, 1 * G, 2 * G), 53 * G);
  // A discrete GPU: the budget and the dense weights are in VRAM; only the host tier takes DRAM.
  EXPECT_EQ(page_cache_capacity(64 * G, false, 8 * G, 1 * G, 2 * G), 63 * G);
  // Pools larger than the memory leave nothing.
  EXPECT_EQ(page_cache_capacity(4 * G, true, 8 * G, 0, 0), 0u);
}

}  // namespace
}  // namespace moesim::sim
