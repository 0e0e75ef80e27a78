// The emulation host's shared cores in the cost of `validate --cluster` (harness/cluster/host_cores.h):
// processor sharing of the units' work and the calls' CPU time, the rest of a call's overhead unstretched.
#include "harness/cluster/host_cores.h"

#include <gtest/gtest.h>

#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "serving/cluster_serving.h"
#include "tests/serving/cluster_inputs.h"

namespace moesim::harness {
namespace {

TEST(HostCores, StretchesWhatNeedsACoreWhenTheDemandExceedsTheCores) {
  // Two cores; a lone call takes 400 us, 200 of them CPU: a hand-off keeps half a core busy.
  HostCores h({2, 400e-6, 200e-6});
  EXPECT_DOUBLE_EQ(h.call(0), 400e-6);
  EXPECT_DOUBLE_EQ(h.work(0, 100e-6), 100e-6);
  for (int i = 0; i < 3; ++i) h.add_work(0, 1);
  h.add_handoff(0, 1);
  EXPECT_DOUBLE_EQ(h.demand(0.5), 3.5);
  // Work: (3.5 busy + itself) over 2 cores.
  EXPECT_DOUBLE_EQ(h.work(0.5, 100e-6), 100e-6 * 4.5 / 2);
  // A call: its 200 us of latency as alone, its 200 us of CPU (3.5 + 0.5) / 2 times slower.
  EXPECT_DOUBLE_EQ(h.call(0.5), 200e-6 + 200e-6 * 4.0 / 2);
  // Below the cores nothing stretches; past their end the busy intervals count no more.
  EXPECT_DOUBLE_EQ(h.call(2.0), 400e-6);
  EXPECT_DOUBLE_EQ(h.demand(0.5), 0.0);  // pruned at 2.0
}

TEST(HostCores, WithoutSharedCoresOrCpuNothingStretches) {
  HostCores none({0, 400e-6, 200e-6});
  for (int i = 0; i < 8; ++i) none.add_work(0, 1);
  EXPECT_DOUBLE_EQ(none.call(0.5), 400e-6);
  EXPECT_DOUBLE_EQ(none.work(0.5, 1e-4), 1e-4);
  HostCores no_cpu({2, 400e-6, 0});
  for (int i = 0; i < 8; ++i) no_cpu.add_work(0, 1);
  EXPECT_DOUBLE_EQ(no_cpu.call(0.5), 400e-6);  // a call all latency is not slowed
  EXPECT_DOUBLE_EQ(no_cpu.work(0.5, 1e-4), 1e-4 * 9 / 2);
}

// Unstretched (no shared cores), the host-cores cost is the simulator's with a fixed call overhead, bit for
// bit: the counter, the hooks and the pricing change nothing else. Three one-GPU servers in a line, each
// holding one of three experts; every sequence (one decode token) needs expert 0, held by the first: the
// others invoke it remotely.
serving::ClusterInput three_in_a_line() {
  serving::ClusterInput in;
  in.model = test::one_layer_cluster_model("host-cores", 3);
  const HardwareProfile hw = load_hardware("desktop-rtx4090");
  for (uint32_t i = 0; i < 3; ++i)
    in.servers.push_back({std::string(1, static_cast<char>('a' + i)),
                          hw,
                          1,
                          in.model.bytes_per_expert(),
                          {},
                          {test::one_token_trace({i, 0, 0, 0}, 3, "host-cores")},
                          test::arrivals_at({0, 1e-4, 2e-4, 3e-4, 1.0})});
  const LinkParams link{1e9 / 8, 1e-4};
  in.links = {{0, 1, link}, {1, 2, link}};
  return in;
}

TEST(HostCores, UnsharedItIsTheSimulatorsFixedCallOverhead) {
  const serving::ClusterInput in = three_in_a_line();
  serving::ClusterOptions opt;
  opt.placement = "prism";
  opt.duration_s = 2;
  std::vector<sim::SimClusterServer> servers;
  for (const auto& s : in.servers) servers.push_back({s.name, s.hw, s.gpus, s.nic_bandwidth});
  sim::SimClusterOptions co;
  co.call_overhead_s = 300e-6;
  co.invoke_overhead_s = 100e-6;
  sim::SimClusterPlatform plain(servers, in.links, co);
  const serving::ClusterResult a = serving::serve_cluster(in, opt, plain);
  const serving::ClusterResult b = serve_on_host_cores(in, opt, servers, co, {0, 300e-6, 150e-6});
  ASSERT_EQ(a.requests.size(), b.requests.size());
  ASSERT_GT(a.requests.size(), 0u);
  for (size_t i = 0; i < a.requests.size(); ++i) EXPECT_EQ(a.requests[i].end, b.requests[i].end);
  // Shared, the same run is slower.
  const serving::ClusterResult c = serve_on_host_cores(in, opt, servers, co, {1, 300e-6, 150e-6});
  double sa = 0, sc = 0;
  for (size_t i = 0; i < a.requests.size(); ++i) sa += a.requests[i].end - a.requests[i].arrival;
  for (const auto& r : c.requests) sc += r.end - r.arrival;
  EXPECT_GT(sc, sa);
}

}  // namespace
}  // namespace moesim::harness
