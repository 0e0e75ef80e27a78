// One-pass miss-ratio curves (replay/mrc.h): the exact LRU curve equals a replay per capacity in every
// counter, on the bundled real traces (100 capacities, both scopes, experts and bytes), at batch 1 and 4
// (refreshes), at capacities small enough for invocations to exceed them; SHARDS at rate 1 is the replay
// itself, and its estimates stay within the bound the README states.
#include "replay/mrc.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/replay/replay_test_util.h"

namespace moesim::testing {
namespace {

using replay::ReplayConfig;

std::vector<CacheCapacity> expert_caps(uint32_t from, uint32_t to) {
  std::vector<CacheCapacity> caps;
  for (uint32_t n = from; n <= to; ++n) caps.push_back({CacheCapacity::Unit::kExperts, n});
  return caps;
}

void expect_equal_to_replays(const replay::ReplayInput& in, CacheScope scope,
                             const std::vector<CacheCapacity>& caps, const std::string& what) {
  const replay::MrcResult m = replay::lru_mrc(in, scope, caps);
  ASSERT_EQ(m.points.size(), caps.size());
  for (size_t i = 0; i < caps.size(); ++i) {
    const auto r = replay::replay(in, ReplayConfig{"lru", scope, caps[i]});
    EXPECT_EQ(m.points[i].counters, r.counters)
        << what << " " << scope_name(scope) << " " << caps[i].to_string();
    EXPECT_EQ(m.points[i].capacity_experts, r.capacity_experts);
    uint64_t layer_sum = 0;
    for (uint64_t h : m.layer_hits[i]) layer_sum += h;
    EXPECT_EQ(layer_sum, r.counters.hits);
  }
}

// The test the MRC is held to: 100 capacities, every counter equal to its own replay.
TEST(Mrc, LruEqualsOneHundredReplaysOnTheRealTraces) {
  for (const auto& t : real_traces()) {
    const auto& info = t->trace.info();
    const auto caps = expert_caps(info.top_k, info.top_k + 99);
    ASSERT_EQ(caps.size(), 100u);
    ASSERT_LE(info.top_k + 99, info.experts) << t->name;
    for (CacheScope scope : {CacheScope::kGlobal, CacheScope::kPerLayer})
      expect_equal_to_replays(*t->input, scope, caps, t->name);
  }
}

// Small capacities: prefill invocations need more experts than the cache holds (the pass-through rule); the
// stack property still holds there, so the curve stays exact.
TEST(Mrc, LruExactWhereInvocationsExceedTheCapacity) {
  const auto& t = *real_traces().back();  // qwen3: prefill passes touch up to all 128 experts of a layer
  const auto caps = expert_caps(t.trace.info().top_k, t.trace.info().top_k + 8);
  const auto m = replay::lru_mrc(*t.input, CacheScope::kPerLayer, caps);
  EXPECT_GT(m.points.front().counters.over_capacity_invocations, 0u);
  EXPECT_GT(m.points.front().counters.max_over_capacity, 0u);
  expect_equal_to_replays(*t.input, CacheScope::kPerLayer, caps, t.name);
}

// Byte budgets: a global cache over layers of different expert sizes weighs keys in bytes (its own pass), a
// per-layer one rounds each layer's share down to experts; mixed with expert counts in one call.
TEST(Mrc, LruExactForByteBudgets) {
  const auto& t = *real_traces().back();
  const auto& eb = t.trace.info().expert_bytes;
  ASSERT_GT(eb.size(), 1u);
  ASSERT_NE(*std::min_element(eb.begin(), eb.end()), *std::max_element(eb.begin(), eb.end()));
  std::vector<CacheCapacity> caps;
  for (uint64_t mib : {1000, 1500, 2000, 3000, 4096, 6000, 9000})
    caps.push_back({CacheCapacity::Unit::kBytes, mib << 20});
  caps.push_back({CacheCapacity::Unit::kExperts, 24});
  ASSERT_TRUE(t.input->cache_config({"lru", CacheScope::kGlobal, caps[0]}).weights_are_bytes);
  for (CacheScope scope : {CacheScope::kGlobal, CacheScope::kPerLayer})
    expect_equal_to_replays(*t.input, scope, caps, t.name);
}

// Batch 4: decode invocations merge sequences, so duplicate touches refresh experts; the stack follows the
// refreshes, and the curve still equals the replays.
TEST(Mrc, LruExactWithRefreshesAtBatchFour) {
  const auto& t = *real_traces().back();
  const traces::LookupStream s = traces::build_lookup_stream(t.trace, 4);
  ASSERT_GT(s.refreshes(), 0u);
  const replay::ReplayInput in(s, t.trace.info().top_k, t.trace.info().expert_bytes);
  const auto caps = expert_caps(8, 40);
  for (CacheScope scope : {CacheScope::kGlobal, CacheScope::kPerLayer})
    expect_equal_to_replays(in, scope, caps, "batch 4");
}

// A worked example, by hand: one layer, 4 experts, top-1, decode only. Keys 0 1 2 0 3 1: distances
// inf inf inf 3 inf 4 (the second 0 has 1 and 2 above it; the second 1 has 2, 0 and 3). At capacity 3: hits
// = the 0 (3 <= 3), misses 5; capacity 4: 2 hits.
TEST(Mrc, WorkedExample) {
  traces::LookupStream s;
  s.layers = 1;
  s.experts = 4;
  s.top_k = 1;
  s.inv_begin = {0};
  s.refresh_begin = {0};
  for (uint32_t k : {0, 1, 2, 0, 3, 1}) {
    s.key.push_back(k);
    s.inv_layer.push_back(0);
    s.inv_phase.push_back(1);
    s.inv_begin.push_back(static_cast<uint32_t>(s.key.size()));
    s.refresh_begin.push_back(0);
  }
  const replay::ReplayInput in(s, 1, {});
  const auto m = replay::lru_mrc(in, CacheScope::kGlobal, expert_caps(1, 4));
  const uint64_t hits[] = {0, 0, 1, 2};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(m.points[i].counters.hits, hits[i]) << "capacity " << i + 1;
    EXPECT_EQ(m.points[i].counters.decode_hits, hits[i]);
    // Evictions: misses less the keys left resident (min(capacity, 4 distinct keys)).
    EXPECT_EQ(m.points[i].counters.evictions, 6 - hits[i] - (i + 1));
  }
}

// SHARDS at rate 1 keeps every key: each point is exactly the policy's replay.
TEST(Mrc, ShardsAtRateOneIsTheReplay) {
  const auto& t = *real_traces().back();
  const auto caps = expert_caps(8, 48);
  for (const char* policy : {"fifo", "belady", "lfu", "lru"}) {
    const auto m =
        replay::shards_mrc(*t.input, policy, CacheScope::kGlobal, {caps[0], caps[20], caps[40]}, {1.0, 1});
    for (size_t i = 0; i < 3; ++i) {
      const auto r =
          replay::replay(*t.input, ReplayConfig{policy, CacheScope::kGlobal, m.points[i].capacity});
      EXPECT_EQ(m.points[i].counters.hits, r.counters.hits) << policy;
      EXPECT_EQ(m.points[i].counters.decode_hits, r.counters.decode_hits) << policy;
      EXPECT_EQ(m.points[i].counters.read_bytes, r.counters.read_bytes) << policy;
    }
  }
}

// The stated bound (README, `replay --mrc`): at the default sample (rate 0.1, 3 salts) on a global cache, the
// estimated curves of LRU, FIFO and Belady on the bundled traces are within 1.5 hit-ratio points of the truth
// on average over the curve, and every point from twice the top-k experts per layer up is within 3 points.
// (Below that lies the curve's cliff at one token's lookups, which a sample of a few hundred keys blurs: up
// to 18 points there, measured and stated, not bounded.)
TEST(Mrc, ShardsWithinTheStatedBound) {
  for (const auto& t : real_traces()) {
    const uint32_t k = t->trace.info().top_k;
    std::vector<CacheCapacity> caps;
    for (uint32_t n = k; n <= t->trace.info().experts; n += 4)
      caps.push_back({CacheCapacity::Unit::kExperts, n});
    const auto exact = replay::lru_mrc(*t->input, CacheScope::kGlobal, caps);
    for (const std::string policy : {"lru", "fifo", "belady"}) {
      const auto est = replay::shards_mrc(*t->input, policy, CacheScope::kGlobal, caps, {0.1, 3});
      double sum = 0;
      for (size_t i = 0; i < caps.size(); ++i) {
        const double truth =
            policy == "lru"
                ? exact.points[i].hit_pct
                : replay::replay(*t->input, ReplayConfig{policy, CacheScope::kGlobal, caps[i]}).hit_pct;
        const double err = std::abs(est.points[i].hit_pct - truth);
        sum += err;
        if (caps[i].value >= 2 * k) {
          EXPECT_LE(err, 3.0) << t->name << " " << policy << " " << caps[i].to_string();
        }
        EXPECT_GE(est.hit_pct_stderr[i], 0.0);
      }
      EXPECT_LE(sum / caps.size(), 1.5) << t->name << " " << policy;
    }
  }
}

TEST(Mrc, RejectsBadInput) {
  const auto& t = *real_traces().back();
  EXPECT_THROW(replay::lru_mrc(*t.input, CacheScope::kGlobal, {}), Error);
  EXPECT_THROW(replay::lru_mrc(*t.input, CacheScope::kGlobal, expert_caps(1, 1)), Error);  // below top-k
  EXPECT_THROW(replay::shards_mrc(*t.input, "fifo", CacheScope::kGlobal, expert_caps(8, 9), {0.0, 1}), Error);
  EXPECT_THROW(replay::shards_mrc(*t.input, "fifo", CacheScope::kGlobal, expert_caps(8, 9), {0.5, 0}), Error);
  EXPECT_THROW(replay::shards_mrc(*t.input, "nope", CacheScope::kGlobal, expert_caps(8, 9), {0.5, 1}), Error);
}

}  // namespace
}  // namespace moesim::testing
