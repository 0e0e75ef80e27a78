#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(TinyLfu, HandCheckedAdmissionAgainstTheInnerVictim) {
  // Plain TinyLFU (window=0) in front of LRU, capacity 2; counts of every lookup (no reset this early).
  //  1 1 2   1 (count 2) and 2 (count 1) enter the main LRU
  //  3       count 1 <= LRU victim 1's 2: rejected (3 passes through)
  //  3       count 2 <= 2: rejected again (ties keep the victim)
  //  3       count 3 > 2: admitted, 1 goes
  //  1       count 3 > victim 2's 1: admitted, 2 goes
  //  2       count 2 <= victim 3's 3: rejected
  //  3       hit (3 was kept as the victim that won: back to the LRU as the most recent)
  //  4       count 1 <= victim 1's 3: rejected
  auto r = run_pattern("tinylfu:window=0", 8, 2, singles({1, 1, 2, 3, 3, 3, 1, 2, 3, 4}));
  EXPECT_EQ(r.letters, "M H M M M M M M H M");
  EXPECT_EQ(r.resident_after[3], (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(r.resident_after[5], (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(r.resident_after[6], (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(r.resident_after[9], (std::vector<uint32_t>{1, 3}));
  // LRU alone keeps every new key.
  EXPECT_EQ(run_pattern("lru", 8, 2, singles({1, 1, 2, 3, 3, 3, 1, 2, 3, 4})).letters, "M H M M H H M M M M");
}

TEST(TinyLfu, TheWindowAdmitsEveryNewKeyFirst) {
  // window=0.5 of capacity 4: a window LRU of 2 and a main LRU of 2. 1 and 2 are frequent; the new keys 3..6
  // pass through the window and lose their duels, so 1 and 2 stay; LRU alone would have lost them.
  const auto seq = singles({1, 2, 1, 2, 3, 4, 5, 6, 1, 2});
  auto r = run_pattern("tinylfu:window=0.5", 8, 4, seq);
  EXPECT_EQ(r.letters, "M M H H M M M M H H");
  EXPECT_EQ(run_pattern("lru", 8, 4, seq).letters, "M M H H M M M M M M");
}

TEST(TinyLfu, AnyInnerPolicyButNoOracle) {
  EXPECT_EQ(eviction_canonical_name("tinylfu"), "tinylfu:inner=lru,window=0.01,sample=32");
  CacheConfig cfg = make_cache_config(1, 8, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 4}, {});
  cfg.next_use_available = true;
  EXPECT_NO_THROW(make_eviction_policy("tinylfu:inner=lfu:history=1", cfg));
  EXPECT_NO_THROW(make_eviction_policy("tinylfu:inner=s3fifo:small=0.25+ghost=0.5", cfg));
  EXPECT_THROW(make_eviction_policy("tinylfu:inner=belady", cfg), UsageError);
  EXPECT_THROW(make_eviction_policy("tinylfu:inner=nope", cfg), UsageError);
  EXPECT_THROW(make_eviction_policy("tinylfu:window=1", cfg), UsageError);
}

TEST(TinyLfu, AnInUseCandidateWaitsForTheEndOfItsInvocation) {
  // capacity 2, window=0: {1} {1} {2} {3,1}: the window holds 3, 1, 2 (most recent first). 2 and 3 enter the
  // main LRU (room for two); 1 (count 3) is still a candidate but the LRU has only keys of this invocation to
  // offer, so the eviction waits for the invocation's end: then 1 beats the LRU's victim 2 (count 1), and 2
  // goes. Not counted as over capacity (the invocation's own two experts fit).
  auto r = run_pattern("tinylfu:window=0", 8, 2, {{1}, {1}, {2}, {3, 1}, {2}}, 2);
  EXPECT_EQ(r.letters, "M H M MH M");
  EXPECT_EQ(r.resident_after[3], (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(r.counters.over_capacity_invocations, 0u);
}

}  // namespace
}  // namespace moesim::testing
