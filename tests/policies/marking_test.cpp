#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(Marking, PhasesMakeTheSecondEvictionDeterministic) {
  // capacity 2. {1} {2}: both marked. {3}: all marked -> new phase, 1 and 2 unmarked (3 marked), one of them
  // goes at random. {4}: the other one is the only unmarked key -> evicted. {3} {4} hit; {1} {2} miss.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto r = run_pattern("marking:seed=" + std::to_string(seed), 8, 2, singles({1, 2, 3, 4, 3, 4, 1, 2}));
    EXPECT_EQ(r.letters, "M M M M H H M M") << "seed " << seed;
    EXPECT_EQ(r.resident_after[3], (std::vector<uint32_t>{3, 4}));
  }
}

TEST(Marking, MarkedKeysSurviveThePhase) {
  // capacity 3: 1 2 3 (all marked); 4: new phase, one of {1,2,3} goes at random, 4 is marked. Requesting a
  // survivor marks it; then 5 must evict the other survivor, the only unmarked key (a key requested in the
  // current phase is never evicted before the phase ends).
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const std::string spec = "marking:seed=" + std::to_string(seed);
    auto r = run_pattern(spec, 8, 3, singles({1, 2, 3, 4}));
    const auto& res = r.resident_after.back();  // 4 and two of {1,2,3}
    ASSERT_EQ(res.size(), 3u);
    std::vector<uint32_t> survivors;
    for (uint32_t k : res)
      if (k != 4) survivors.push_back(k);
    // Request a survivor (marks it), then 5: the victim must be the other survivor (only unmarked key).
    auto r2 = run_pattern(spec, 8, 3, singles({1, 2, 3, 4, survivors[0], 5, survivors[0], 4, survivors[1]}));
    EXPECT_EQ(r2.letters, "M M M M H M H H M") << "seed " << seed;
  }
}

TEST(Marking, DifferentSeedsGiveDifferentChoices) {
  int one_evicted = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed)
    one_evicted +=
        run_pattern("marking:seed=" + std::to_string(seed), 8, 2, singles({1, 2, 3, 1})).letters.back() ==
        'M';
  EXPECT_GT(one_evicted, 20);
  EXPECT_LT(one_evicted, 80);
}

TEST(Marking, RefreshChangesNothing) {
  const Invocations invs = {{0, 1, 2}, {3, 4}, {0, 3}, {1, 5}, {2, 6, 0}, {4, 1}};
  const Invocations refreshes = {{0, 1}, {}, {0}, {}, {2, 0}};
  auto a = run_pattern("marking:seed=3", 8, 3, invs, 3, refreshes);
  auto b = run_pattern("marking:seed=3", 8, 3, invs, 3);
  EXPECT_EQ(a.letters, b.letters);
  EXPECT_EQ(a.resident_after, b.resident_after);
}

}  // namespace
}  // namespace moesim::testing
