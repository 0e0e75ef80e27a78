// A system of the registry (serving/system.h) run through the pipeline on a hand-made workload and the fake
// platform, as `moesim run` assembles one: the per-system tests (tests/serving/*_system_test.cpp) each pin
// what their system does on a case whose times are a hand computation.
#pragma once

#include <memory>
#include <string>

#include "core/routing.h"
#include "core/scheduling.h"
#include "serving/system.h"
#include "tests/core/fake_platform.h"
#include "tests/core/tiny_workload.h"

namespace moesim::test {

struct SystemRun {
  PipelineResult result;
  std::string eviction;  // the residency's name
};

// The fake platform every per-system test uses: dense 1 s, SSD read 2 s, transfer 3 s, expert compute 4 s,
// one unit of each resource.
inline FakePlatform fixed_durations() {
  FakePlatform f;
  f.duration(OpKind::kDenseCompute, 1)
      .duration(OpKind::kSsdRead, 2)
      .duration(OpKind::kTransfer, 3)
      .duration(OpKind::kExpertCompute, 4);
  return f;
}

// Runs `system` (its default eviction when `eviction` is empty) with `cfg` (its system, budget and scope set
// here) over `w` on `f`, for a trace of one layer of `w.experts` experts, top-1.
inline SystemRun run_system(const std::string& system_name, const std::string& eviction,
                            serving::SystemConfig cfg, const TinyWorkload& w, FakePlatform& f,
                            PipelineOptions po = {}) {
  const std::unique_ptr<serving::System> system = SystemRegistry::instance().create(system_name, "system");
  cfg.system = PolicySpec::parse(system_name);
  const traces::LookupStream stream;
  traces::TraceInfo info;
  info.layers = 1;
  info.experts = w.experts;
  info.top_k = 1;
  serving::SourcedCosts costs;
  costs.costs = w.costs;
  serving::RunResult r;
  const auto residency = system->build(
      serving::SystemBuildContext{cfg, stream, info, costs, f},
      PolicySpec::parse(eviction.empty() ? serving::system_traits(cfg.system).eviction : eviction), po, r);
  auto routing = make_routing_policy("identity", RoutingSetup{1, w.experts, 1});
  auto sched = make_scheduling_policy(serving::system_traits(cfg.system).scheduling);
  Pipeline p(w.costs, po, *residency, *routing, *sched, nullptr);
  return {p.run(w.view(), f), residency->name()};
}

// The per-system tests' case: three decode steps of one layer of 2 experts -- expert 0, 0 again, then 1 --
// with a per-layer cache of `capacity` experts, on fixed_durations().
inline SystemRun run_three_steps(const std::string& system_name, const std::string& eviction,
                                 uint64_t capacity) {
  const TinyWorkload w({{{0}}, {{0}}, {{1}}}, {"w"});
  FakePlatform f = fixed_durations();
  serving::SystemConfig cfg;
  cfg.scope = CacheScope::kPerLayer;
  cfg.budget = CacheCapacity{CacheCapacity::Unit::kExperts, capacity};
  return run_system(system_name, eviction, cfg, w, f);
}

// The mean duration of the result's steps.
inline double mean_step(const PipelineResult& r) {
  double s = 0;
  for (const auto& step : r.steps) s += step.end - step.start;
  return s / static_cast<double>(r.steps.size());
}

}  // namespace moesim::test
