// The system `layer-offload` (serving/systems/layer_offload_system.cpp), built through the system registry as
// any system is: an expert cache of --budget in front of the SSD. A hit costs the step only its dense op and
// the expert's compute; a miss adds the read and the transfer, which the fake platform's fixed durations make
// a hand computation; the cache's capacity and its eviction policy decide which lookups hit.
#include <gtest/gtest.h>

#include "serving/system.h"
#include "tests/serving/system_run.h"

namespace moesim {
namespace {

test::SystemRun run(const std::string& eviction, uint64_t capacity) {
  return test::run_three_steps("layer-offload", eviction, capacity);
}

using test::mean_step;

TEST(LayerOffloadSystem, TheFirstStepLoadsTheWholeLayerAndLaterStepsFindIt) {
  // Room for the layer (2 experts). Step 0 looks up and loads both: reads 0 [1, 3] and 1 [3, 5] on the one
  // SSD unit, transfers [3, 6] and [6, 9] on the one link, expert 0's compute [6, 10]: 10 s. Steps 1 and 2
  // find both resident: dense 1 + compute 4 = 5 s each.
  const test::SystemRun r = run("lru", 2);
  EXPECT_EQ(r.result.cache.lookups, 6u);  // 2 a step: the whole layer
  EXPECT_EQ(r.result.cache.hits, 4u);
  EXPECT_DOUBLE_EQ(mean_step(r.result), 20.0 / 3);
  // Room for one: the layer never fits whole, so fewer lookups hit and the steps reload.
  const test::SystemRun one = run("lru", 1);
  EXPECT_LT(one.result.cache.hits, r.result.cache.hits);
  EXPECT_GT(mean_step(one.result), mean_step(r.result));
}

TEST(LayerOffloadSystem, TheSystemsTraits) {
  // On its registry entry: no system is built to ask.
  const serving::SystemTraits& t = SystemRegistry::instance().find("layer-offload", "system").traits;
  EXPECT_TRUE(t.host_tier);
  EXPECT_FALSE(t.plans_pools());
  EXPECT_FALSE(t.partial_states);
}

}  // namespace
}  // namespace moesim
