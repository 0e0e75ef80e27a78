// replay/routing_replay: the token-level replay. Identity routing reproduces the fast path exactly for every
// eviction policy; lambda = 0 and M = K reproduce the plain routing exactly; miss rate is non-increasing in
// lambda on the bundled real traces with synthetic logits; the oracle passes converge.
#include "replay/routing_replay.h"

#include <gtest/gtest.h>

#include "core/eviction.h"
#include "tests/fixtures.h"
#include "traces/logits_for.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

namespace moesim {
namespace {

const std::string kData = test::bundled_data("traces/");

struct Fixture {
  traces::Trace trace;
  traces::LookupStream stream;
  std::unique_ptr<replay::ReplayInput> base;
  std::unique_ptr<replay::RoutingReplayInput> in;
  explicit Fixture(traces::Trace t, uint32_t batch = 1) : trace(std::move(t)) {
    stream = traces::build_lookup_stream(trace, batch);
    base = std::make_unique<replay::ReplayInput>(stream, trace.info().top_k, trace.info().expert_bytes);
    in = std::make_unique<replay::RoutingReplayInput>(*base, trace);
  }
};

traces::Trace with_logits(const std::string& name) {
  return traces::attach_synthetic_logits(traces::load_trace(kData + name), 1, name);
}

TEST(ReplayRouting, IdentityEqualsTheFastPathForEveryEvictionPolicy) {
  for (uint32_t batch : {1u, 3u}) {
    Fixture f(traces::load_trace(kData + "qwen3-30b-a3b.route.csv"), batch);
    for (const auto& e : EvictionRegistry::instance().entries())
      for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
        for (uint64_t cap : {8u, 64u}) {
          const replay::ReplayConfig plain{e.name, scope, {CacheCapacity::Unit::kExperts, cap}};
          const auto fast = replay::replay(*f.base, plain);
          const auto tok = replay::replay_routing(*f.in, {e.name, "identity", scope, plain.capacity});
          EXPECT_EQ(tok.replay.counters, fast.counters) << e.name << " " << scope_name(scope) << " " << cap;
          EXPECT_EQ(tok.deviation.changed, 0u);
        }
  }
}

TEST(ReplayRouting, LambdaZeroAndMEqualKReproduceThePlainRoutingExactly) {
  Fixture f(with_logits("qwen3-30b-a3b.route.csv"));
  for (const char* ev : {"lru", "belady", "lfu", "static-freq"}) {
    const CacheCapacity cap{CacheCapacity::Unit::kExperts, 64};
    const auto plain = replay::replay_routing(*f.in, {ev, "identity", CacheScope::kPerLayer, cap});
    for (const char* r :
         {"cache-prior:lambda=0", "cache-prior:lambda=0,J=0", "max-rank:M=6,J=0", "prune:h=7"}) {
      const auto got = replay::replay_routing(*f.in, {ev, r, CacheScope::kPerLayer, cap});
      EXPECT_EQ(got.replay.counters, plain.replay.counters) << ev << " " << r;
      EXPECT_EQ(got.deviation.changed, 0u) << r;
      EXPECT_EQ(got.lifetime.count, plain.lifetime.count) << r;
      EXPECT_EQ(got.lifetime.mean, plain.lifetime.mean) << r;
    }
  }
}

// Property: the miss rate (vs the router's lookups) never rises with lambda, LRU per layer, half
// the experts cached. Measured on lambda = 0, 0.05, ..., 1 for the three bundled traces: no exception
// found. (It is not a theorem: a boost can bring in an expert that evicts one a later token needed.)
TEST(ReplayRouting, MissRateIsNonIncreasingInLambdaOnTheBundledTraces) {
  for (const char* name :
       {"qwen3-30b-a3b.route.csv", "gemma-4-26b-a4b.route.csv", "gpt-oss-120b.route.csv"}) {
    Fixture f(with_logits(name));
    const CacheCapacity half{CacheCapacity::Unit::kExperts, f.trace.info().experts / 2};
    double prev = 101;
    for (int i = 0; i <= 20; ++i) {
      const std::string spec = "cache-prior:lambda=" + std::to_string(i / 20.0);
      const auto r = replay::replay_routing(*f.in, {"lru", spec, CacheScope::kPerLayer, half});
      EXPECT_LE(r.miss_pct, prev + 1e-12) << name << " " << spec;
      prev = r.miss_pct;
    }
  }
}

TEST(ReplayRouting, CachePriorCutsMissesAndReportsItsDeviation) {
  Fixture f(with_logits("qwen3-30b-a3b.route.csv"));
  const CacheCapacity half{CacheCapacity::Unit::kExperts, 64};
  const auto plain = replay::replay_routing(*f.in, {"lru", "identity", CacheScope::kPerLayer, half});
  const auto cp =
      replay::replay_routing(*f.in, {"lru", "cache-prior:lambda=0.5", CacheScope::kPerLayer, half});
  EXPECT_LT(cp.miss_pct, plain.miss_pct);
  EXPECT_GT(cp.deviation.changed, 0u);
  EXPECT_EQ(cp.deviation.selections, f.trace.records());
  EXPECT_GT(cp.deviation.mass_mean(), 0.0);
  EXPECT_LE(cp.deviation.mass_p95(), 1.0);
  // J = 1: the top-ranked expert is never removed.
  EXPECT_EQ(cp.deviation.rank_hist[0], 0u);
  EXPECT_GT(cp.lifetime.mean, plain.lifetime.mean);
}

TEST(ReplayRouting, OracleUnderCacheDependentRoutingRunsFixedPointPasses) {
  Fixture f(with_logits("qwen3-30b-a3b.route.csv"));
  const CacheCapacity half{CacheCapacity::Unit::kExperts, 64};
  const auto one =
      replay::replay_routing(*f.in, {"belady", "cache-prior:lambda=0.5", CacheScope::kPerLayer, half, 1});
  EXPECT_TRUE(one.oracle);
  EXPECT_EQ(one.passes, 1u);
  const auto many =
      replay::replay_routing(*f.in, {"belady", "cache-prior:lambda=0.5", CacheScope::kPerLayer, half, 8});
  EXPECT_GE(many.passes, 2u);  // pass 1 saw the router's routing, which cache-prior changes
  if (many.converged) {
    EXPECT_LT(many.passes, 8u + 1);
  }
  // Pruning does not read the cache: pass 2 sees exactly the routing it produces.
  const auto pr = replay::replay_routing(*f.in, {"belady", "prune:h=3", CacheScope::kPerLayer, half, 8});
  EXPECT_TRUE(pr.converged);
  EXPECT_EQ(pr.passes, 2u);
  const auto lru =
      replay::replay_routing(*f.in, {"lru", "cache-prior:lambda=0.5", CacheScope::kPerLayer, half, 8});
  EXPECT_FALSE(lru.oracle);
  EXPECT_EQ(lru.passes, 1u);
}

TEST(ReplayRouting, SweepIsIdenticalForEveryThreadCount) {
  Fixture f(with_logits("gpt-oss-120b.route.csv"));
  std::vector<replay::RoutingReplayConfig> cfgs;
  for (const char* r : {"identity", "cache-prior:lambda=0.5", "cumsum:p=0.8", "max-rank:M=8"})
    for (const char* e : {"lru", "belady", "random:seed=3"})
      cfgs.push_back({e, r, CacheScope::kGlobal, {CacheCapacity::Unit::kExperts, 32}});
  const auto a = replay::replay_routing_sweep(*f.in, cfgs, 1);
  const auto b = replay::replay_routing_sweep(*f.in, cfgs, 4);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].replay.counters, b[i].replay.counters);
    EXPECT_EQ(a[i].lifetime.mean, b[i].lifetime.mean);
    EXPECT_EQ(a[i].deviation.changed, b[i].deviation.changed);
  }
}

TEST(ReplayRouting, RoutingThatNeedsLogitsFailsOnARealTraceWithTheFix) {
  Fixture f(traces::load_trace(kData + "qwen3-30b-a3b.route.csv"));
  const CacheCapacity half{CacheCapacity::Unit::kExperts, 64};
  EXPECT_THROW(replay::replay_routing_sweep(*f.in, {{"lru", "cache-prior", CacheScope::kPerLayer, half}}, 1),
               Error);
}

}  // namespace
}  // namespace moesim
