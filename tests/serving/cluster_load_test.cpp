// The cluster's load analysis (serving/cluster_load.h) on simulated queues whose answer is known: M/M/1 FCFS
// queues of 300 requests (seeded, base/rng.h) at load 0.8 are stable and must not be called overloaded;
// at 1.3 arrivals outpace service and must be. Per seed the verdict is deterministic; the thresholds were
// chosen for a false-alarm rate of about 1 in 300 at 0.8 (header), so 50 seeds allow one miss each way.
#include "serving/cluster_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "base/rng.h"

namespace moesim::serving {
namespace {

// Arrivals at rate `load` (service rate 1, exponential), served one at a time in arrival order.
ClusterResult mm1(double load, uint32_t requests, uint64_t seed) {
  Rng rng(seed);
  ClusterResult r;
  double t = 0, free_at = 0;
  for (uint32_t i = 0; i < requests; ++i) {
    t += -std::log(1 - rng.uniform()) / load;
    const double start = std::max(t, free_at);
    free_at = start - std::log(1 - rng.uniform());
    r.requests.push_back({0, t, start + 0.5 * (free_at - start), free_at, 8});
  }
  return r;
}

TEST(ClusterLoad, AStableQueueIsNotOverloadedAndAnOverloadedOneIs) {
  int false_alarms = 0, missed = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const LoadStats stable = load_stats(mm1(0.8, 300, seed), UINT32_MAX);
    false_alarms += stable.overloaded;
    EXPECT_NEAR(stable.utilisation, 1.0, 0.1) << seed;  // it keeps up
    const LoadStats over = load_stats(mm1(1.3, 300, seed), UINT32_MAX);
    missed += !over.overloaded;
    EXPECT_GT(over.utilisation, 1.05) << seed;  // arrivals outpace what it serves
    EXPECT_GT(over.backlog, stable.backlog) << seed;
  }
  EXPECT_LE(false_alarms, 1);
  EXPECT_LE(missed, 2);  // 2 of these 50 seeds: an overload of 300 requests that has not piled up yet
}

TEST(ClusterLoad, FiguresOfAHandCheckedRun) {
  // Three requests on one server: arrivals at 0, 1 and 10 s; the first two overlap.
  ClusterResult r;
  r.requests = {{0, 0.0, 0.5, 2.0, 3}, {0, 1.0, 2.5, 4.0, 3}, {0, 10.0, 10.5, 12.0, 3}};
  const LoadStats s = load_stats(r, 0);
  EXPECT_EQ(s.requests, 3u);
  EXPECT_EQ(s.tokens, 12u);
  EXPECT_DOUBLE_EQ(s.arrival_rate, 2.0 / 10.0);
  EXPECT_DOUBLE_EQ(s.throughput_rps, 3.0 / 12.0);
  EXPECT_DOUBLE_EQ(s.throughput_tps, 12.0 / 12.0);
  // Requests 0 and 2 found the server idle (latencies 2 and 2): the median of those.
  EXPECT_EQ(s.idle_arrivals, 2u);
  EXPECT_DOUBLE_EQ(s.service_s, 2.0);
  EXPECT_EQ(s.backlog, 0u);
  EXPECT_FALSE(s.overloaded);
  EXPECT_EQ(load_stats(r, 1).requests, 0u);  // another server's: none
}

}  // namespace
}  // namespace moesim::serving
