// The simulated cluster (sim/sim_cluster_platform.h): each server's GPUs are FIFO units with the cost model's
// durations, a message takes its route's hops (latency + bytes / bandwidth each, store and forward), wake-ups
// fire at their time, and completions come from run(), never from the submitting call.
#include "sim/sim_cluster_platform.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "core/hardware_profile.h"

namespace moesim::sim {
namespace {

struct Done {
  uint32_t token;
  OpTiming timing;
  double now;
};

struct Recorder : OpSink {
  const ClusterPlatform* p = nullptr;
  std::vector<Done> done;
  void op_done(uint32_t token, const OpTiming& t) override { done.push_back({token, t, p->now()}); }
};

Op expert_op(uint32_t tokens) {
  Op op;
  op.kind = OpKind::kExpertCompute;
  op.resource = ResourceClass::kGpu;
  op.bytes = 8'000'000;
  op.flops = 2.0 * 4'000'000 * tokens;
  op.tokens = tokens;
  return op;
}

Op message(uint64_t bytes) {
  Op op;
  op.kind = OpKind::kTransfer;
  op.resource = ResourceClass::kLink;
  op.bytes = bytes;
  return op;
}

// a - b - c (no a - c link): 1 MB/s, 10 ms each.
SimClusterPlatform chain(const SimClusterOptions& opt = {}) {
  const HardwareProfile hw = load_hardware("desktop-rtx4090");
  std::vector<SimClusterServer> servers = {{"a", hw, 2, 0}, {"b", hw, 1, 0}, {"c", hw, 1, 0}};
  return SimClusterPlatform(servers, {{0, 1, {1e6, 0.01}}, {1, 2, {1e6, 0.01}}}, opt);
}

TEST(SimClusterPlatform, GpusAreFifoUnitsOfTheCostModel) {
  SimClusterPlatform p = chain();
  Recorder r;
  r.p = &p;
  ServerPlatform& a = p.server(0);
  const double d = a.estimate(expert_op(1));
  ASSERT_GT(d, 0);
  a.submit_on(0, expert_op(1), &r, 1);
  a.submit_on(0, expert_op(1), &r, 2);
  a.submit_on(1, expert_op(1), &r, 3);
  EXPECT_TRUE(r.done.empty());  // never from the submitting call
  EXPECT_DOUBLE_EQ(a.unit_free_at(ResourceClass::kGpu, 0), 2 * d);
  EXPECT_DOUBLE_EQ(a.unit_free_at(ResourceClass::kGpu, 1), d);
  p.run();
  ASSERT_EQ(r.done.size(), 3u);
  EXPECT_EQ(r.done[0].token, 1u);
  EXPECT_EQ(r.done[1].token, 3u);
  EXPECT_EQ(r.done[2].token, 2u);
  EXPECT_DOUBLE_EQ(r.done[2].timing.start, d);  // behind token 1 on GPU 0
  EXPECT_DOUBLE_EQ(r.done[2].now, 2 * d);
  EXPECT_EQ(r.done[1].timing.unit, 1u);
  EXPECT_EQ(a.resource_stats()[0].ops, 3u);
  EXPECT_GT(a.estimate(expert_op(4096)), d);  // compute-bound: more tokens, more time
}

// A server's host links (kLink units, one per GPU): an expert's load from host memory is a FIFO of its own
// beside its GPU, bytes / the profile's host-link bandwidth.
TEST(SimClusterPlatform, HostLinksLoadBesideTheGpus) {
  SimClusterPlatform p = chain();
  Recorder r;
  r.p = &p;
  ServerPlatform& a = p.server(0);
  EXPECT_EQ(a.units(ResourceClass::kLink), 2u);
  Op load = message(50'000'000);
  load.expert = 3;
  const double l = 50e6 / migration_io_bytes_per_s(load_hardware("desktop-rtx4090"));
  const double d = a.estimate(expert_op(1));
  a.submit_on(0, load, &r, 1);
  a.submit_on(0, load, &r, 2);
  a.submit_on(0, expert_op(1), &r, 3);
  EXPECT_DOUBLE_EQ(a.unit_free_at(ResourceClass::kLink, 0), 2 * l);
  EXPECT_DOUBLE_EQ(a.unit_free_at(ResourceClass::kLink, 1), 0);
  EXPECT_DOUBLE_EQ(a.unit_free_at(ResourceClass::kGpu, 0), d);  // not behind the loads
  p.run();
  ASSERT_EQ(r.done.size(), 3u);
  EXPECT_EQ(r.done[0].token, 3u);
  EXPECT_DOUBLE_EQ(r.done[1].now, l);
  EXPECT_DOUBLE_EQ(r.done[2].now, 2 * l);
  EXPECT_EQ(a.resource_stats()[0].ops, 1u);  // the GPU's
}

TEST(SimClusterPlatform, MessagesTakeTheirRouteHopByHop) {
  SimClusterPlatform p = chain();
  Recorder r;
  r.p = &p;
  EXPECT_DOUBLE_EQ(p.route_latency(0, 2), 0.02);
  EXPECT_DOUBLE_EQ(p.route_inverse_bandwidth(0, 2), 2e-6);
  p.send(0, 2, message(10'000), &r, 7);
  p.send(0, 1, message(10'000), &r, 8);  // behind the first on a -> b
  p.run();
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[0].token, 8u);
  EXPECT_DOUBLE_EQ(r.done[0].timing.end, 0.02 + 0.01);  // queued 10 ms behind 7, then 10 ms + 10 ms
  EXPECT_EQ(r.done[1].token, 7u);
  EXPECT_DOUBLE_EQ(r.done[1].timing.end, 2 * (0.01 + 0.01));  // two hops, store and forward
  EXPECT_DOUBLE_EQ(r.done[1].timing.start, 0);
  EXPECT_EQ(p.network().links()[0].fifo.bytes, 20'000u);
}

TEST(SimClusterPlatform, AnInvocationGoesThereComputesAndComesBack) {
  SimClusterPlatform p = chain();
  Recorder r;
  r.p = &p;
  const double d = p.server(2).estimate(expert_op(1));
  p.server(2).submit_on(0, expert_op(1), &r, 1);  // c's GPU is busy until d
  p.invoke(0, 2, 3, 10'000, {{0, expert_op(1)}, {0, expert_op(1)}}, &r, 2);
  p.run();
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[1].token, 2u);
  const double way = 2 * (0.01 + 0.01);  // two hops of 10 ms latency + 10 KB at 1 MB/s
  // Both experts queue on c's GPU on arrival (it is idle by then), back to back, then the results return.
  EXPECT_NEAR(r.done[1].timing.end, way + 2 * d + way, 1e-12);
  EXPECT_DOUBLE_EQ(r.done[1].timing.start, 0);
  EXPECT_EQ(p.server(2).resource_stats()[0].ops, 3u);
}

TEST(SimClusterPlatform, WakeUpsAndTimeline) {
  SimClusterOptions opt;
  opt.record_timeline = true;
  SimClusterPlatform p = chain(opt);
  Recorder r;
  r.p = &p;
  p.wake_at(5, &r, 1);
  p.server(1).submit(expert_op(1), &r, 2);
  p.send(1, 2, message(1000), &r, 3);
  p.run();
  ASSERT_EQ(r.done.size(), 3u);
  EXPECT_EQ(r.done.back().token, 1u);
  EXPECT_DOUBLE_EQ(r.done.back().now, 5);
  ASSERT_EQ(p.timeline().size(), 2u);
  EXPECT_EQ(p.timeline()[0].process, 1u);  // server b's GPU
  EXPECT_EQ(p.timeline()[0].kind, 1);
  EXPECT_EQ(p.timeline()[1].process, 3u + 1u);  // link b - c
  EXPECT_EQ(p.timeline()[1].kind, 2);
}

TEST(SimClusterPlatform, RejectsAServerWithoutGpu) {
  const HardwareProfile hw = load_hardware("desktop-rtx4090");
  EXPECT_THROW(SimClusterPlatform({{"a", hw, 0, 0}}, {}), Error);
}

}  // namespace
}  // namespace moesim::sim
