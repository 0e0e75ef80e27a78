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

TEST(PageCache, DenseKeysAreApartFromEveryReadsKey) {
  Op a;
  a.kind = OpKind::kSsdRead;
  a.layer = 3;
  for (uint16_t e : {uint16_t{0}, uint16_t{127}, kNoLabel})
    for (uint16_t t : {uint16_t{0}, uint16_t{2}, kNoLabel}) {
      a.expert = e;
      a.tensor = t;
      EXPECT_NE(page_cache_key(a), dense_page_key(3));
    }
  EXPECT_NE(dense_page_key(3), dense_page_key(4));
}

}  // namespace
}  // namespace moesim::sim
