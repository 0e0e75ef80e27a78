#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(RandomEviction, OnlyCandidateIsNotInUse) {
  // capacity 2: {1} {2} {1,3}: 2 is the only key not in use, whatever the seed.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto r = run_pattern("random:seed=" + std::to_string(seed), 8, 2, {{1}, {2}, {1, 3}, {1}, {2}});
    EXPECT_EQ(r.letters, "M M HM H M") << "seed " << seed;
  }
}

TEST(RandomEviction, VictimIsUniformAndSeeded) {
  // capacity 2: {1} {2} {3} evicts 1 or 2 at random; {1} tells which.
  int one_evicted = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const std::string spec = "random:seed=" + std::to_string(seed);
    auto a = run_pattern(spec, 8, 2, singles({1, 2, 3, 1}));
    auto b = run_pattern(spec, 8, 2, singles({1, 2, 3, 1}));
    EXPECT_EQ(a.letters, b.letters) << "same seed, different result";
    one_evicted += a.letters.back() == 'M';
  }
  EXPECT_GT(one_evicted, 140);  // binomial(400, 1/2): 200 +- 3 sigma (30)
  EXPECT_LT(one_evicted, 260);
}

TEST(RandomEviction, CanonicalNameHasTheSeed) {
  EXPECT_EQ(eviction_canonical_name("random"), "random:seed=1");
  EXPECT_EQ(eviction_canonical_name("random:seed=7"), "random:seed=7");
  EXPECT_THROW(eviction_canonical_name("random:sed=7"), Error);
}

TEST(Random, RefreshChangesNothing) {
  const Invocations invs = {{0, 1, 2}, {3, 4}, {0, 3}, {1, 5}, {2, 6, 0}, {4, 1}};
  const Invocations refreshes = {{0, 1}, {}, {0}, {}, {2, 0}};
  auto a = run_pattern("random:seed=3", 8, 3, invs, 3, refreshes);
  auto b = run_pattern("random:seed=3", 8, 3, invs, 3);
  EXPECT_EQ(a.letters, b.letters);
  EXPECT_EQ(a.resident_after, b.resident_after);
}

}  // namespace
}  // namespace moesim::testing
