// The system `offload` (serving/systems/offload_system.cpp), built through the system registry as any system
// is: an expert cache of --budget in front of the SSD. A hit costs the step only its dense op and the
// expert's compute; a miss adds the read and the transfer, which the fake platform's fixed durations make a
// hand computation; the cache's capacity and its eviction policy decide which lookups hit.
#include <gtest/gtest.h>

#include "serving/system.h"
#include "tests/serving/system_run.h"

namespace moesim {
namespace {

test::SystemRun run(const std::string& eviction, uint64_t capacity) {
  return test::run_three_steps("offload", eviction, capacity);
}

using test::mean_step;

TEST(OffloadSystem, AHitCostsTheComputeAndAMissAddsTheReadAndTheTransfer) {
  // One expert of room: 0 misses (1 + 2 + 3 + 4 = 10 s), 0 hits (dense 1 then compute 4 = 5 s), 1 misses (10
  // s).
  const test::SystemRun one = run("lru", 1);
  EXPECT_EQ(one.result.cache.lookups, 3u);
  EXPECT_EQ(one.result.cache.hits, 1u);
  EXPECT_EQ(one.result.cache.evictions, 1u);  // expert 0 leaves for 1
  EXPECT_DOUBLE_EQ(mean_step(one.result), 25.0 / 3);
  EXPECT_EQ(one.eviction, "lru");
  // Room for both: the same lookups, the same one hit (1 is new), nothing evicted.
  const test::SystemRun two = run("lru", 2);
  EXPECT_EQ(two.result.cache.hits, 1u);
  EXPECT_EQ(two.result.cache.evictions, 0u);
}

TEST(OffloadSystem, TheSystemsDefaultEvictionAndTraits) {
  const serving::SystemTraits& t = serving::system_traits(PolicySpec{"offload", {}});
  EXPECT_EQ(t.eviction, "lru");
  EXPECT_TRUE(t.host_tier);
  EXPECT_FALSE(t.per_layer_scope);
  EXPECT_FALSE(t.plans_pools());
  EXPECT_EQ(run("", 1).eviction, "lru");
  EXPECT_EQ(run("fifo", 1).eviction, "fifo");
}

}  // namespace
}  // namespace moesim
