// Belady's next-use calendar (policies/eviction/belady_calendar.h) against the indexed heap of
// policies/eviction/belady.cpp: on random small streams (one partition, several layers, capacities in experts
// and in bytes of mixed sizes, prefill-sized and decode-sized invocations) the calendar evicts the same keys
// in the same order in every invocation; the policy's replay() (which runs the calendar) gives the general
// path's counters; a view whose next uses are not the stream's own is detected and replayed with the heap.
// Also the hierarchical bitset against std::set.
#include "policies/eviction/belady_calendar.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace moesim::policies {
namespace {

TEST(HierarchicalBitset, HighestSetBitMatchesASet) {
  std::mt19937 rng(7);
  for (const uint64_t n : {1u, 63u, 64u, 65u, 4095u, 4096u, 4097u, 300000u}) {
    HierarchicalBitset bits(n);
    std::set<uint64_t> ref;
    std::uniform_int_distribution<uint64_t> pick(0, n - 1);
    for (int op = 0; op < 4000; ++op) {
      const uint64_t i = pick(rng);
      if (rng() % 2) {
        bits.set(i);
        ref.insert(i);
      } else {
        bits.clear(i);
        ref.erase(i);
      }
      ASSERT_EQ(bits.highest(), ref.empty() ? HierarchicalBitset::kNone : *ref.rbegin()) << "n " << n;
    }
  }
}

// A stream as LookupView arrays, with each lookup's next use (the next invocation of its key).
struct Stream {
  std::vector<uint32_t> inv_begin{0}, key, next_use;
  std::vector<uint16_t> inv_layer;
  std::vector<uint8_t> inv_phase;
  LookupView view() const { return {inv_begin, inv_layer, inv_phase, key, next_use, {}, {}}; }
};

// Invocations of random layers; each looks up distinct experts of its layer, few (decode) or many (prefill);
// experts are drawn from a skewed distribution so that keys come back.
Stream random_stream(std::mt19937& rng, uint32_t layers, uint32_t experts, uint32_t invocations) {
  Stream s;
  std::vector<uint32_t> order(experts);
  for (uint32_t i = 0; i < invocations; ++i) {
    const uint32_t layer = rng() % layers;
    const bool prefill = rng() % 8 == 0;
    const uint32_t n = prefill ? 1 + rng() % experts : 1 + rng() % std::min<uint32_t>(experts, 3);
    std::iota(order.begin(), order.end(), 0u);
    // Skewed: a partial shuffle that keeps low experts near the front more often.
    for (uint32_t j = 0; j < n; ++j)
      std::swap(order[j], order[j + rng() % std::min<uint32_t>(experts - j, 4)]);
    for (uint32_t j = 0; j < n; ++j) s.key.push_back(layer * experts + order[j]);
    s.inv_begin.push_back(static_cast<uint32_t>(s.key.size()));
    s.inv_layer.push_back(static_cast<uint16_t>(layer));
    s.inv_phase.push_back(prefill ? 0 : 1);
  }
  s.next_use.assign(s.key.size(), kNeverUsedAgain);
  std::vector<uint32_t> next(layers * experts, kNeverUsedAgain);
  for (uint32_t i = invocations; i-- > 0;)
    for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j) {
      s.next_use[j] = next[s.key[j]];
      next[s.key[j]] = i;
    }
  return s;
}

struct Walked {
  std::vector<std::vector<uint32_t>> evicted;  // per invocation, in eviction order
  CacheCounters counters;
};

template <typename Cache>
Walked walk(Cache& cache, const LookupView& v) {
  Walked w;
  for (uint32_t i = 0; i < v.invocations(); ++i) {
    w.evicted.emplace_back();
    InvocationWalker::walk_stream(
        cache, v, i, [](uint32_t, uint32_t, bool) {}, &w.evicted.back());
  }
  w.counters = cache.counters();
  return w;
}

CacheConfig config(uint32_t layers, uint32_t experts, CacheCapacity capacity,
                   std::vector<uint64_t> bytes = {}) {
  CacheConfig cfg = make_cache_config(layers, experts, 1, CacheScope::kGlobal, capacity, bytes);
  cfg.next_use_available = true;
  return cfg;
}

TEST(BeladyCalendar, EvictsWhatTheHeapEvictsOnRandomStreams) {
  std::mt19937 rng(2016);
  int degenerate = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t layers = 1 + rng() % 4, experts = 2 + rng() % 12;
    const Stream s = random_stream(rng, layers, experts, 1 + rng() % 200);
    const LookupView v = s.view();
    const bool in_bytes = trial % 3 == 2;  // mixed expert sizes: keys weigh their bytes
    std::vector<uint64_t> bytes;
    for (uint32_t l = 0; l < layers; ++l) bytes.push_back(100 + 50 * (rng() % 4));
    const CacheConfig cfg =
        in_bytes ? config(layers, experts,
                          {CacheCapacity::Unit::kBytes, 250 * (1 + rng() % (layers * experts))}, bytes)
                 : config(layers, experts, {CacheCapacity::Unit::kExperts, 1 + rng() % experts});
    ASSERT_TRUE(BeladyCalendar::applies(cfg, v));

    ExpertCache heap("belady", cfg);
    const Walked expected = walk(heap, v);
    BeladyCalendar calendar(cfg, v);
    BasicCache<BeladyCalendar> cache(cfg, calendar);
    const Walked got = walk(cache, v);
    ASSERT_EQ(got.evicted, expected.evicted) << "trial " << trial;
    ASSERT_EQ(got.counters, expected.counters) << "trial " << trial;
    EXPECT_TRUE(calendar.consistent_at_end());
    EXPECT_EQ(make_eviction_policy("belady", cfg)->replay(v), expected.counters) << "trial " << trial;
    degenerate += expected.counters.over_capacity_invocations > 0;
  }
  EXPECT_GT(degenerate, 0) << "no trial passed experts through (in-use keys evicted after the invocation)";
}

TEST(BeladyCalendar, NextUsesNotTheStreamsOwnFallBackToTheHeap) {
  std::mt19937 rng(41);
  int changed = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Stream s = random_stream(rng, 2, 6, 20 + rng() % 60);
    // One next use moved to another invocation after its own (or to "never", or from "never"), as a
    // section whose checksums were rewritten could say; the range check of the .mtr reader still passes.
    const uint32_t j = rng() % s.key.size();
    const uint32_t inv = static_cast<uint32_t>(std::upper_bound(s.inv_begin.begin(), s.inv_begin.end(), j) -
                                               s.inv_begin.begin()) -
                         1;
    const uint32_t n = static_cast<uint32_t>(s.inv_layer.size());
    const uint32_t was = s.next_use[j];
    s.next_use[j] = inv + 1 < n && rng() % 4 != 0 ? inv + 1 + rng() % (n - inv - 1) : kNeverUsedAgain;
    if (s.next_use[j] == was) continue;
    const LookupView v = s.view();
    const CacheConfig cfg = config(2, 6, {CacheCapacity::Unit::kExperts, 1 + rng() % 4});

    ExpertCache heap("belady", cfg);
    const Walked expected = walk(heap, v);
    BeladyCalendar calendar(cfg, v);
    BasicCache<BeladyCalendar> cache(cfg, calendar);
    bool caught = false;
    try {
      walk(cache, v);
    } catch (const InconsistentNextUse&) {
      caught = true;
    }
    EXPECT_TRUE(caught || !calendar.consistent_at_end()) << "trial " << trial << ": not detected";
    ++changed;
    EXPECT_EQ(make_eviction_policy("belady", cfg)->replay(v), expected.counters) << "trial " << trial;
  }
  EXPECT_GT(changed, 100);
}

TEST(BeladyCalendar, ASecondReplayIsRefused) {
  std::mt19937 rng(3);
  const Stream s = random_stream(rng, 2, 4, 30);
  const CacheConfig cfg = config(2, 4, {CacheCapacity::Unit::kExperts, 2});
  auto policy = make_eviction_policy("belady", cfg);
  policy->replay(s.view());
  EXPECT_THROW(policy->replay(s.view()), Error);
}

}  // namespace
}  // namespace moesim::policies
