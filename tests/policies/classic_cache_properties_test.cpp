// Properties of the classic cache policies (ARC, 2Q, LIRS, CLOCK, S3-FIFO, SIEVE, TinyLFU in front of several
// inner policies) on random small streams, through both the general and the fast path (run_pattern checks
// they agree and that no invocation ends over capacity): Belady never misses more than any of them, on
// streams of single lookups (the classic setting of its optimality) and of multi-expert invocations. TinyLFU
// may decline to keep a new expert after its invocation (a bypass), which moesim's Belady never does (it only
// evicts keys not in use), so its bound is the offline optimum WITH bypass: after each invocation, while over
// capacity, drop the resident key whose next use is furthest, the invocation's own keys included.
#include <algorithm>

#include "base/rng.h"
#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

const char* const kSpecs[] = {"arc",
                              "2q",
                              "lirs",
                              "clock",
                              "s3fifo",
                              "s3fifo:small=0.3,ghost=0.5",
                              "sieve",
                              "tinylfu",
                              "tinylfu:window=0",
                              "tinylfu:window=0.3,inner=arc",
                              "tinylfu:window=0,inner=lfu:history=1"};

Invocations random_stream(Rng& rng, uint32_t experts, uint32_t max_keys, int n) {
  Invocations invs;
  for (int i = 0; i < n; ++i) {
    const auto size = static_cast<uint32_t>(1 + rng.below(max_keys));
    std::vector<uint32_t> inv;
    while (inv.size() < size) {
      // Skewed: half of the lookups go to the first third of the experts, so that frequency matters.
      const auto k =
          static_cast<uint32_t>(rng.below(2) ? rng.below(std::max(1u, experts / 3)) : rng.below(experts));
      if (std::find(inv.begin(), inv.end(), k) == inv.end()) inv.push_back(k);
    }
    invs.push_back(inv);
  }
  return invs;
}

uint64_t belady_with_bypass_hits(const Invocations& invs, uint32_t experts, uint32_t capacity) {
  const auto next_use = [&](uint32_t key, size_t after) {
    for (size_t j = after + 1; j < invs.size(); ++j)
      if (std::find(invs[j].begin(), invs[j].end(), key) != invs[j].end()) return j;
    return invs.size();
  };
  std::vector<uint8_t> resident(experts, 0);
  uint64_t hits = 0, used = 0;
  for (size_t j = 0; j < invs.size(); ++j) {
    for (uint32_t k : invs[j]) {
      if (resident[k])
        ++hits;
      else {
        resident[k] = 1;
        ++used;
      }
    }
    while (used > capacity) {
      uint32_t victim = 0;
      size_t furthest = 0;
      for (uint32_t k = 0; k < experts; ++k)
        if (resident[k] && next_use(k, j) >= furthest) {
          furthest = next_use(k, j);
          victim = k;
        }
      resident[victim] = 0;
      --used;
    }
  }
  return hits;
}

TEST(ClassicCacheProperties, BeladyNeverMissesMoreAndCapacityHolds) {
  for (uint64_t trial = 0; trial < 60; ++trial) {
    Rng rng(1000 + trial);
    const auto experts = static_cast<uint32_t>(4 + rng.below(12));
    const auto top_k = static_cast<uint32_t>(trial % 2 ? 1 + rng.below(3) : 1);
    const auto capacity = static_cast<uint32_t>(top_k + rng.below(experts - top_k));
    const Invocations invs = random_stream(rng, experts, top_k, 300);
    const uint64_t belady_hits = run_pattern("belady", experts, capacity, invs, top_k).counters.hits;
    const uint64_t bypass_hits = belady_with_bypass_hits(invs, experts, capacity);
    EXPECT_GE(bypass_hits, belady_hits);
    for (const char* spec : kSpecs) {
      SCOPED_TRACE(std::string(spec) + " trial " + std::to_string(trial) + " experts " +
                   std::to_string(experts) + " capacity " + std::to_string(capacity) + " top_k " +
                   std::to_string(top_k));
      const auto r = run_pattern(spec, experts, capacity, invs, top_k);
      EXPECT_LE(r.counters.hits, std::string(spec).starts_with("tinylfu") ? bypass_hits : belady_hits);
      EXPECT_EQ(r.counters.over_capacity_invocations, 0u);
    }
  }
}

}  // namespace
}  // namespace moesim::testing
