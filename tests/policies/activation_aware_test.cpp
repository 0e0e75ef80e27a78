// The activation-aware eviction policy (policies/eviction/activation_aware.cpp) on hand-worked streams: the
// request's activation shares decide, a prefill of layer 0 starts a new request, and across layers the
// layer factor keeps the first layers' experts. Both cache paths (ExpertCache, replay) must agree.
#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

struct Inv {
  uint32_t layer;
  bool decode;
  std::vector<uint32_t> keys;
};

// Runs `invs` through the policy on the general path and the fast path; returns the letters.
std::string drive(const std::string& spec, const CacheConfig& cfg, const std::vector<Inv>& invs,
                  std::vector<std::vector<uint32_t>>* resident_after = nullptr) {
  std::vector<uint32_t> inv_begin{0}, key;
  std::vector<uint16_t> inv_layer;
  std::vector<uint8_t> inv_phase;
  ExpertCache cache(spec, cfg);
  std::string letters;
  for (const Inv& inv : invs) {
    cache.begin_invocation(inv.layer, inv.decode);
    if (!letters.empty()) letters += ' ';
    for (uint32_t k : inv.keys) {
      letters += cache.lookup(k, kNeverUsedAgain) ? 'H' : 'M';
      key.push_back(k);
    }
    cache.end_invocation(static_cast<uint32_t>(inv.keys.size()));
    inv_begin.push_back(static_cast<uint32_t>(key.size()));
    inv_layer.push_back(static_cast<uint16_t>(inv.layer));
    inv_phase.push_back(inv.decode ? 1 : 0);
    if (resident_after) {
      std::vector<uint32_t> res;
      for (uint32_t k = 0; k < cfg.keys(); ++k)
        if (cache.resident(k)) res.push_back(k);
      resident_after->push_back(res);
    }
  }
  const std::vector<uint32_t> next_use(key.size(), kNeverUsedAgain);
  LookupView view{inv_begin, inv_layer, inv_phase, key, next_use, {}, {}};
  EXPECT_EQ(make_eviction_policy(spec, cfg)->replay(view), cache.counters()) << "fast and general paths disagree";
  return letters;
}

TEST(ActivationAware, KeepsTheRequestsMostActivatedExpert) {
  // One layer, capacity 2, one request (decode only). After 1 1 1 2 the request counts 1:3, 2:1; 3 misses
  // and evicts the smaller share, 2 (LRU evicts 1, the least recent), so the last 1 hits.
  const Invocations seq = singles({1, 1, 1, 2, 3, 1});
  EXPECT_EQ(run_pattern("activation-aware", 8, 2, seq).letters, "M H H M M H");
  EXPECT_EQ(run_pattern("lru", 8, 2, seq).letters, "M H H M M M");
}

TEST(ActivationAware, APrefillOfTheFirstLayerStartsANewRequest) {
  // One layer, capacity 2. Request A: prefill {1}, decodes 1 1 1 2 (counts 1:4, 2:1). Request B's prefill
  // {3} ends A: B has counted only 3, so 1 and 2 both have share 0 and the least recent, 1, goes. A policy
  // that kept A's counts (LFU with history) would evict 2 instead.
  const CacheConfig cfg =
      make_cache_config(1, 8, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 2}, {});
  const std::vector<Inv> invs = {{0, false, {1}}, {0, true, {1}}, {0, true, {1}}, {0, true, {1}},
                                 {0, true, {2}},  {0, false, {3}}, {0, true, {1}}};
  std::vector<std::vector<uint32_t>> res;
  EXPECT_EQ(drive("activation-aware", cfg, invs, &res), "M H H H M M M");
  EXPECT_EQ(res[5], (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(drive("lfu:history=1", cfg, invs), "M H H H M M H");
}

TEST(ActivationAware, ASharedCacheKeepsTheFirstLayersExperts) {
  // Three layers (L = 3: layer factors 1, 3/4, 1/2), one global cache of 3 experts (8 experts per layer,
  // key = layer * 8 + expert). One token uses 0, 8, 16: each has share 1 of its layer. The next token's
  // layer 0 picks 1 (a miss): layer 0's shares become 1/2 and 1/2 (1 in use), so the priorities are
  //   key 0: (1/2 + eps) * 1 = 0.5 + eps,  key 8: (1 + eps) * 3/4 = 0.75 + ...,  key 16: (1 + eps) * 1/2 = 0.5 + eps/2
  // and 16, the last layer's, goes, where LRU evicts 0, the least recent.
  const CacheConfig cfg =
      make_cache_config(3, 8, 1, CacheScope::kGlobal, {CacheCapacity::Unit::kExperts, 1}, {});
  const std::vector<Inv> invs = {{0, true, {0}}, {1, true, {8}}, {2, true, {16}}, {0, true, {1}}};
  std::vector<std::vector<uint32_t>> aa, lru;
  drive("activation-aware", cfg, invs, &aa);
  drive("lru", cfg, invs, &lru);
  EXPECT_EQ(aa.back(), (std::vector<uint32_t>{0, 1, 8}));
  EXPECT_EQ(lru.back(), (std::vector<uint32_t>{1, 8, 16}));
}

TEST(ActivationAware, APrefetchAdmissionIsNotAnActivation) {
  // One layer, capacity 2. 1 1 (count 2), then 2 is prefetched between invocations (no lookup, no count)
  // and 3 is looked up: 2's share is 0 against 1's 2/3, so 2 goes although 1 is the less recent.
  const CacheConfig cfg =
      make_cache_config(1, 8, 1, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 2}, {});
  ExpertCache cache("activation-aware", cfg);
  for (uint32_t k : {1u, 1u}) {
    cache.begin_invocation(0, true);
    cache.lookup(k, kNeverUsedAgain);
    cache.end_invocation(1);
  }
  ASSERT_TRUE(cache.prefetch(0, 2, kNeverUsedAgain));
  cache.begin_invocation(0, true);
  EXPECT_FALSE(cache.lookup(3, kNeverUsedAgain));
  cache.end_invocation(1);
  EXPECT_TRUE(cache.resident(1));
  EXPECT_FALSE(cache.resident(2));
}

}  // namespace
}  // namespace moesim::testing
