// The system `zipmoe` (serving/systems/zipmoe_system.cpp), built through the system registry as any system
// is: what it declares (its traits), what it refuses before any work (parameters out of range, a budget it
// cannot plan, weights its compression does not code), and what a run on the bundled real trace with the
// BF16 preset's sizes says of its plan: planned by Alg. 4 or given, inside the budget; given pools hold the
// same experts whoever reads the E-chunks (`io` changes the times, and the plan Alg. 3 makes for them).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "base/error.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "harness/sim_runner.h"
#include "serving/model_costs.h"
#include "serving/system.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

namespace moesim {
namespace {

const traces::Trace& qwen() {
  static const traces::Trace t = traces::load_trace(test::bundled_data("traces/qwen3-30b-a3b.route.csv"));
  return t;
}

serving::RunResult run(const std::string& system, const std::string& budget,
                       const std::optional<ModelSpec>& model = load_model("qwen3-30b-a3b")) {
  const serving::SourcedCosts costs = serving::model_costs(qwen().info(), model);
  serving::SystemConfig cfg;
  cfg.system = PolicySpec::parse(system);
  cfg.scope = CacheScope::kPerLayer;
  cfg.budget = CacheCapacity::parse(budget);
  const auto stream = traces::build_lookup_stream(qwen(), 1);
  return harness::run_simulated(cfg, stream, qwen().info(), costs, load_hardware("jetson-agx-orin-64gb"));
}

TEST(ZipMoeSystem, DeclaresItsPlannerSchedulerAndPartialStates) {
  const serving::SystemTraits& t = serving::system_traits(PolicySpec{"zipmoe", {}});
  EXPECT_EQ(t.eviction, "freq");  // the paper's in-pool eviction
  EXPECT_EQ(t.scheduling, "zipmoe");
  EXPECT_TRUE(t.plans_pools());
  EXPECT_TRUE(t.per_layer_scope);
  EXPECT_TRUE(t.uses_store_layout);
  EXPECT_TRUE(t.partial_states);
}

TEST(ZipMoeSystem, RefusesParametersOutOfRangeWhenBuilt) {
  for (const char* spec : {"zipmoe:io=disk", "zipmoe:shards=0", "zipmoe:e_ratio=-0.5", "zipmoe:pools=F=2"})
    EXPECT_THROW(SystemRegistry::instance().create(spec, "system"), UsageError) << spec;
}

TEST(ZipMoeSystem, RefusesABudgetInExpertsAndQuantizedSizes) {
  // Its pools are sized in bytes.
  EXPECT_THROW(run("zipmoe", "8"), Error);
  // Without --model the sizes are the trace's: the Q4_K_M file it was recorded from, not BF16 tensors.
  try {
    run("zipmoe", "8GiB", std::nullopt);
    FAIL() << "quantized sizes accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pass --model"), std::string::npos) << e.what();
  }
}

TEST(ZipMoeSystem, PlansInsideTheBudgetAndSaysHow) {
  const serving::RunResult r = run("zipmoe", "8GiB");
  ASSERT_TRUE(r.plan.is_object());
  EXPECT_EQ(r.plan["source"].get<std::string>().rfind("planned (ZipMoE Alg. 4", 0), 0u) << r.plan.dump();
  EXPECT_LE(r.cache_capacity_bytes, 8ull << 30);
  EXPECT_GT(r.cache_capacity_experts, 0u);
  EXPECT_EQ(r.plan["shards"].get<uint32_t>(), 4u);
  EXPECT_EQ(r.plan["io"].get<std::string>(), "fused");
  // Given ratios are used as given, not planned.
  const serving::RunResult given = run("zipmoe:pools=F=0.5+C=0.5", "8GiB");
  EXPECT_EQ(given.plan["source"].get<std::string>(), "--pools");
  EXPECT_LE(given.cache_capacity_bytes, 8ull << 30);
}

TEST(ZipMoeSystem, WhoReadsTheExponentChunksChangesTheTimesAndThePlanNotTheCache) {
  // With the pools given, the same residency whoever reads: the same lookups hit; the times differ.
  const serving::RunResult fused = run("zipmoe:io=fused,pools=F=0.3+C=0.3+S=0.4", "8GiB");
  const serving::RunResult thread = run("zipmoe:io=thread,pools=F=0.3+C=0.3+S=0.4", "8GiB");
  EXPECT_EQ(fused.cache_capacity_experts, thread.cache_capacity_experts);
  EXPECT_EQ(fused.result.cache.lookups, thread.result.cache.lookups);
  EXPECT_EQ(fused.result.cache.hits, thread.result.cache.hits);
  EXPECT_GT(fused.result.cache.lookups, 0u);
  EXPECT_NE(fused.result.steps.back().end, thread.result.steps.back().end);
  // Planned, Alg. 3's delays assume the run's own reader, so the plan says which it planned for.
  EXPECT_EQ(run("zipmoe:io=thread", "8GiB").plan["io"].get<std::string>(), "thread");
}

}  // namespace
}  // namespace moesim
