// The toy system `no-cache` (serving/systems/no_cache_system.cpp), built through the system registry as any
// system is: every lookup misses, so each decode step pays the whole miss DAG, which the fake platform's
// fixed durations make a hand computation.
#include <gtest/gtest.h>

#include <map>

#include "core/routing.h"
#include "core/scheduling.h"
#include "serving/system.h"
#include "tests/core/fake_platform.h"
#include "tests/core/tiny_workload.h"

namespace moesim {
namespace {

TEST(NoCacheSystem, EveryLookupMissesAndEachStepPaysTheWholeMiss) {
  // Three decode steps of one invocation: expert 0, expert 0 again, expert 1.
  const test::TinyWorkload w({{{0}}, {{0}}, {{1}}}, {"w"});
  test::FakePlatform f;
  f.duration(OpKind::kDenseCompute, 1)
      .duration(OpKind::kSsdRead, 2)
      .duration(OpKind::kTransfer, 3)
      .duration(OpKind::kExpertCompute, 4);

  const std::unique_ptr<serving::System> system = SystemRegistry::instance().create("no-cache", "system");
  serving::SystemConfig cfg;
  cfg.system = PolicySpec{"no-cache", {}};
  const traces::LookupStream stream;
  const traces::TraceInfo info;
  const serving::SourcedCosts costs;
  PipelineOptions po;
  po.record_timeline = true;
  serving::RunResult r;
  const auto residency = system->build(serving::SystemBuildContext{cfg, stream, info, costs, f},
                                       PolicySpec::parse(serving::system_traits(cfg.system).eviction), po, r);
  auto routing = make_routing_policy("identity", RoutingSetup{1, 2, 1});
  auto sched = make_scheduling_policy(serving::system_traits(cfg.system).scheduling);
  Pipeline p(w.costs, po, *residency, *routing, *sched, nullptr);
  const PipelineResult res = p.run(w.view(), f);

  EXPECT_EQ(res.cache.lookups, 3u);
  EXPECT_EQ(res.cache.hits, 0u);
  EXPECT_EQ(res.states.lookups[static_cast<size_t>(ExpertState::kMissed)], 3u);
  // Each step: dense 1 -> read 2 -> transfer 3 -> compute 4 (the dense op and the read overlap nothing:
  // the read of the step's expert waits for nothing, the compute for both) = 10 s; the repeat of expert 0
  // in step 1 misses again.
  ASSERT_EQ(res.steps.size(), 3u);
  double tpot = 0;
  for (const auto& s : res.steps) tpot += s.end - s.start;
  tpot /= 3;
  EXPECT_DOUBLE_EQ(tpot, 10);
  std::map<OpKind, int> count;
  for (const auto& e : res.timeline) ++count[e.op.kind];
  EXPECT_EQ(count[OpKind::kSsdRead], 3);
}

}  // namespace
}  // namespace moesim
