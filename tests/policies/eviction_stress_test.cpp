// Every registered eviction policy on random streams and random cache configurations (scopes, capacities
// in experts or bytes, mixed expert sizes, oversized invocations): the cache never ends an invocation over
// capacity, the general path (ExpertCache) and the devirtualized fast path (replay) give identical counters,
// and keys evicted during the eviction phase of a fitting invocation are never its own.
#include <algorithm>

#include "base/rng.h"
#include "tests/policies/eviction_test_util.h"

namespace moesim::testing {
namespace {

TEST(EvictionStress, RandomConfigurationsAllPolicies) {
  int configs = 0;
  for (uint64_t trial = 0; trial < 80; ++trial) {
    Rng rng(trial);
    const auto layers = static_cast<uint32_t>(1 + rng.below(4));
    const auto experts = static_cast<uint32_t>(2 + rng.below(20));
    const auto top_k = static_cast<uint32_t>(1 + rng.below(2));
    const CacheScope scope = rng.below(2) ? CacheScope::kGlobal : CacheScope::kPerLayer;
    std::vector<uint64_t> eb;
    for (uint32_t l = 0; l < layers; ++l) eb.push_back(1000 + 500 * rng.below(3));
    const CacheCapacity cap =
        rng.below(2)
            ? CacheCapacity{CacheCapacity::Unit::kExperts, top_k + rng.below(experts)}
            : CacheCapacity{CacheCapacity::Unit::kBytes, (top_k + rng.below(experts)) * 2000 * layers};
    CacheConfig cfg;
    try {
      cfg = make_cache_config(layers, experts, top_k, scope, cap, eb);
    } catch (const Error&) {
      continue;  // e.g. a byte budget below top-k experts of some layer: rejected, as it must be
    }
    ++configs;
    // A stream of invocations: mostly small, sometimes up to every expert of the layer (prefill-like).
    std::vector<uint32_t> ib{0}, key, nu;
    std::vector<uint16_t> il;
    std::vector<uint8_t> ip;
    for (int i = 0; i < 1500; ++i) {
      const auto l = static_cast<uint32_t>(rng.below(layers));
      const auto n = static_cast<uint32_t>(1 + rng.below(rng.below(5) ? top_k * 2 : experts));
      std::vector<uint32_t> ks;
      for (uint32_t t = 0; t < n; ++t) {
        const auto k = l * experts + static_cast<uint32_t>(rng.below(experts));
        if (std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
      }
      key.insert(key.end(), ks.begin(), ks.end());
      ib.push_back(static_cast<uint32_t>(key.size()));
      il.push_back(static_cast<uint16_t>(l));
      ip.push_back(static_cast<uint8_t>(rng.below(2)));
    }
    nu.assign(key.size(), kNeverUsedAgain);
    std::vector<uint32_t> nx(layers * experts, kNeverUsedAgain);
    for (size_t j = il.size(); j-- > 0;)
      for (uint32_t i = ib[j]; i < ib[j + 1]; ++i) {
        nu[i] = nx[key[i]];
        nx[key[i]] = static_cast<uint32_t>(j);
      }
    const auto freq = key_frequencies(key, layers * experts);
    cfg.next_use_available = true;
    cfg.key_frequency = freq;
    const LookupView view{ib, il, ip, key, nu, {}, {}};
    for (const auto& e : EvictionRegistry::instance().entries()) {
      SCOPED_TRACE(e.name + " trial " + std::to_string(trial));
      ExpertCache c(e.name, cfg);
      uint64_t degenerate = 0;
      for (size_t j = 0; j < il.size(); ++j) {
        c.begin_invocation(il[j], ip[j] == 1);
        for (uint32_t i = ib[j]; i < ib[j + 1]; ++i) c.lookup(key[i], nu[i]);
        const uint64_t before = c.counters().over_capacity_invocations;
        std::vector<uint32_t> evicted;
        c.end_invocation(ib[j + 1] - ib[j], &evicted);
        degenerate += c.counters().over_capacity_invocations - before;
        std::vector<uint64_t> used(cfg.partitions(), 0);
        for (uint32_t k = 0; k < cfg.keys(); ++k)
          if (c.resident(k)) used[scope == CacheScope::kGlobal ? 0 : k / experts] += cfg.key_weight[k];
        for (uint32_t p = 0; p < cfg.partitions(); ++p)
          ASSERT_LE(used[p], cfg.capacity[p]) << "over capacity after invocation " << j;
        // An invocation that fits keeps all its keys (static-freq may pass unpinned keys through by design,
        // and TinyLFU's admission lets a new key that loses its duel pass through).
        if (c.counters().over_capacity_invocations == before && e.name != "static-freq" &&
            e.name != "tinylfu") {
          for (uint32_t i = ib[j]; i < ib[j + 1]; ++i) {
            ASSERT_TRUE(c.resident(key[i])) << "invocation " << j;
          }
        }
      }
      EXPECT_EQ(degenerate, c.counters().over_capacity_invocations);
      auto fast = make_eviction_policy(e.name, cfg);
      EXPECT_EQ(fast->replay(view), c.counters()) << "fast and general paths disagree";
    }
  }
  EXPECT_GT(configs, 40);  // most random configurations are valid
}

}  // namespace
}  // namespace moesim::testing
