// Test helper for eviction policies: runs hand-written invocations (one layer, one partition) through a
// policy on BOTH paths -- the general ExpertCache (virtual hooks) and the devirtualized fast path
// EvictionPolicy::replay -- checks they agree, and returns the hit/miss letters in lookup order.
// `refreshes[j]` (optional) lists keys of invocation j to refresh after its lookups, in order
// (traces/lookup_stream.h: a duplicate touch inside the invocation).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/eviction.h"

namespace moesim::testing {

using Invocations = std::vector<std::vector<uint32_t>>;  // each: the unique experts of one invocation

struct PatternRun {
  std::string letters;  // 'H' / 'M' per lookup, invocations separated by ' '
  CacheCounters counters;
  std::vector<std::vector<uint32_t>> resident_after;  // resident keys after each invocation
};

inline PatternRun run_pattern(const std::string& spec, uint32_t experts, uint32_t capacity,
                              const Invocations& invs, uint32_t top_k = 1, const Invocations& refreshes = {}) {
  // The flat stream, next uses (invocation index of the key's next lookup) and frequencies.
  std::vector<uint32_t> inv_begin{0}, key, next_use, refresh_begin{0}, refresh;
  std::vector<uint16_t> inv_layer;
  std::vector<uint8_t> inv_phase;
  for (size_t j = 0; j < invs.size(); ++j) {
    const auto& inv = invs[j];
    for (uint32_t k : inv) key.push_back(k);
    for (uint32_t k : j < refreshes.size() ? refreshes[j] : std::vector<uint32_t>{}) {
      const auto at = std::find(inv.begin(), inv.end(), k);
      if (at == inv.end()) ADD_FAILURE() << "refresh of key " << k << " not looked up in invocation " << j;
      refresh.push_back(inv_begin.back() + static_cast<uint32_t>(at - inv.begin()));
    }
    refresh_begin.push_back(static_cast<uint32_t>(refresh.size()));
    inv_begin.push_back(static_cast<uint32_t>(key.size()));
    inv_layer.push_back(0);
    inv_phase.push_back(1);
  }
  next_use.assign(key.size(), kNeverUsedAgain);
  std::vector<uint32_t> next(experts, kNeverUsedAgain);
  for (size_t j = invs.size(); j-- > 0;)
    for (uint32_t i = inv_begin[j]; i < inv_begin[j + 1]; ++i) {
      next_use[i] = next[key[i]];
      next[key[i]] = static_cast<uint32_t>(j);
    }
  const std::vector<uint64_t> freq = key_frequencies(key, experts);
  CacheConfig cfg = make_cache_config(1, experts, top_k, CacheScope::kPerLayer,
                                      {CacheCapacity::Unit::kExperts, capacity}, {});
  cfg.next_use_available = true;
  cfg.key_frequency = freq;

  PatternRun out;
  ExpertCache cache(spec, cfg);
  for (size_t j = 0; j < invs.size(); ++j) {
    cache.begin_invocation(0, true);
    if (j) out.letters += ' ';
    for (uint32_t i = inv_begin[j]; i < inv_begin[j + 1]; ++i)
      out.letters += cache.lookup(key[i], next_use[i]) ? 'H' : 'M';
    for (uint32_t r = refresh_begin[j]; r < refresh_begin[j + 1]; ++r) cache.refresh(key[refresh[r]]);
    std::vector<uint32_t> evicted;
    cache.end_invocation(inv_begin[j + 1] - inv_begin[j], &evicted);
    for (uint32_t v : evicted) EXPECT_FALSE(cache.resident(v)) << "evicted key " << v << " still resident";
    std::vector<uint32_t> res;
    for (uint32_t k = 0; k < experts; ++k)
      if (cache.resident(k)) res.push_back(k);
    EXPECT_LE(res.size(), capacity) << "cache over capacity after invocation " << j;
    out.resident_after.push_back(res);
  }
  out.counters = cache.counters();

  LookupView view{inv_begin, inv_layer, inv_phase, key, next_use, refresh_begin, refresh};
  auto fast = make_eviction_policy(spec, cfg);
  EXPECT_EQ(fast->replay(view), out.counters) << "fast path and general path disagree for " << spec;
  return out;
}

// Single-key invocations from a list of keys.
inline Invocations singles(const std::vector<uint32_t>& keys) {
  Invocations v;
  for (uint32_t k : keys) v.push_back({k});
  return v;
}

}  // namespace moesim::testing
