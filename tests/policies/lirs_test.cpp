#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Lirs, HandCheckedStatusesAndStackPruning) {
  // capacity 4: Lhirs = 1 (at least one unit), Llirs = 3. S top first; Q front = the next victim.
  //  1 2 3   LIR while the LIR keys are below Llirs: S = 3 2 1
  //  4       HIR resident: S = 4 3 2 1, Q = 4
  //  5       HIR: Q = 4 5; evict Q's front 4 (it stays in S, non-resident)
  //  4       non-resident in S: LIR; the bottom LIR 1 becomes HIR (Q = 5 1); S = 4 5 3 2; evict 5 (stays in
  //  S) 1       resident HIR not in S: stays HIR, to the top of S and the end of Q 3       LIR hit: S = 3 1 4
  //  5 2 2       LIR hit at the bottom: S = 2 3 1 4 5, pruning forgets 5 (non-resident HIR): S = 2 3 1 4 5
  //  forgotten: HIR, Q = 1 5; evict 1 (non-resident in S) 1       non-resident in S: LIR; the bottom LIR 4
  //  becomes HIR (Q = 5 4); evict 5
  auto r = run_pattern("lirs", 10, 4, singles({1, 2, 3, 4, 5, 4, 1, 3, 2, 5, 1}));
  EXPECT_EQ(r.letters, "M M M M M M H H H M M");
  EXPECT_EQ(r.resident_after[5], (std::vector<uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(r.resident_after[9], (std::vector<uint32_t>{2, 3, 4, 5}));
  EXPECT_EQ(r.resident_after[10], (std::vector<uint32_t>{1, 2, 3, 4}));
  // LRU on the same lookups: 1 is gone when it comes back at lookup 7.
  EXPECT_EQ(run_pattern("lru", 10, 4, singles({1, 2, 3, 4, 5, 4, 1, 3, 2, 5, 1})).letters,
            "M M M M M H M H M M H");
}

TEST(Lirs, ALoopLargerThanTheCacheKeepsItsLirKeys) {
  // The case LIRS was made for: a loop over 5 keys with capacity 4. LRU misses every lookup; LIRS keeps its
  // three LIR keys and misses only on the two keys that share the one HIR slot.
  std::vector<uint32_t> loop;
  for (int i = 0; i < 4; ++i)
    for (uint32_t k = 1; k <= 5; ++k) loop.push_back(k);
  const auto lirs = run_pattern("lirs", 10, 4, singles(loop));
  const auto lru = run_pattern("lru", 10, 4, singles(loop));
  EXPECT_EQ(lru.counters.hits, 0u);
  EXPECT_EQ(lirs.counters.hits, 9u);  // rounds 2-4: keys 1, 2, 3 hit
}

TEST(Lirs, Parameters) {
  EXPECT_EQ(eviction_canonical_name("lirs"), "lirs:hir=0.01,stack=2");
  CacheConfig cfg = make_cache_config(1, 8, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 4}, {});
  EXPECT_THROW(make_eviction_policy("lirs:hir=0", cfg), UsageError);
  EXPECT_THROW(make_eviction_policy("lirs:stack=0.5", cfg), UsageError);
}

}  // namespace
}  // namespace moesim::testing
