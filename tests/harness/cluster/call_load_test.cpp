// The call-load measurement and counter of `validate --cluster` (harness/cluster/call_load.h): a run's calls
// by the others in flight and by those of them using a CPU, and the calls in flight of a simulated cluster
// counted as the simulator counts them.
#include "harness/cluster/call_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/hardware_profile.h"
#include "sim/sim_cluster_platform.h"

namespace moesim::harness {
namespace {

TEST(CallLoad, OverheadsByCallsInFlightAndByThoseUsingACpu) {
  // kind, submitted, received, start, end, returned (ms)
  const std::vector<CallSpan> ms = {
      {0, 0, 0.2, 0.3, 0.4, 0.6},       // alone: overhead 0.2 + 0.2
      {1, 10, 10.2, 10.3, 10.4, 10.7},  // alone: 0.5
      {1, 10.1, 10.5, 12, 12.1, 12.3},  // one in flight, in its hand-off (10.1 < 10.2): 0.6
      {1, 11, 11.1, 11.2, 11.3, 11.4},  // one in flight (the one above), waiting for its unit: 0.2
      {2, 20, 20.1, 20.1, 25, 25.2},    // an invocation
      {1, 21, 21.3, 21.3, 21.4, 21.5},  // one in flight, waiting for the network: 0.4
  };
  std::vector<CallSpan> calls;
  for (CallSpan c : ms) {
    for (double* t : {&c.submitted, &c.received, &c.start, &c.end, &c.returned}) *t *= 1e-3;
    calls.push_back(c);
  }
  const Json j = overhead_by_concurrency(calls);
  EXPECT_EQ(j["dense"]["by_inflight"]["0"]["calls"], 1);
  EXPECT_NEAR(j["dense"]["by_inflight"]["0"]["median_s"].get<double>(), 0.4e-3, 1e-12);
  const Json& e = j["expert"];
  EXPECT_EQ(e["by_inflight"]["0"]["calls"], 1);
  EXPECT_EQ(e["by_inflight"]["1"]["calls"], 3);
  EXPECT_NEAR(e["by_inflight"]["1"]["median_s"].get<double>(), 0.4e-3, 1e-12);
  EXPECT_EQ(e["by_active"]["0"]["calls"], 3);  // the lone one, and the two whose companion used no CPU
  EXPECT_NEAR(e["by_active"]["0"]["median_s"].get<double>(), 0.4e-3, 1e-12);
  EXPECT_EQ(e["by_active"]["1"]["calls"], 1);
  EXPECT_NEAR(e["by_active"]["1"]["median_s"].get<double>(), 0.6e-3, 1e-12);
}

struct Recorder : OpSink {
  std::vector<uint32_t> tokens;
  void op_done(uint32_t token, const OpTiming&) override { tokens.push_back(token); }
};

TEST(CallLoad, CountedClusterCountsCallsInFlightAsTheSimulator) {
  const HardwareProfile hw = load_hardware("desktop-rtx4090");
  sim::SimClusterOptions o;
  struct Seen : CallObserver {
    std::vector<uint64_t> in_flight;
    std::vector<std::pair<uint32_t, uint32_t>> made;
    void before(uint64_t n) override { in_flight.push_back(n); }
    void after(uint32_t server, uint32_t unit) override { made.emplace_back(server, unit); }
  } seen;
  sim::SimClusterPlatform inner({{"a", hw, 2, 0}, {"b", hw, 1, 0}}, {{0, 1, {1e9, 1e-3}}}, o);
  CountedCluster p(inner, seen);
  Op op;
  op.kind = OpKind::kExpertCompute;
  op.resource = ResourceClass::kGpu;
  op.flops = 1e6;
  op.tokens = 1;
  Recorder r;
  p.server(0).submit_on(0, op, &r, 7);
  p.server(0).submit_on(1, op, &r, 8);
  RemoteWork w;
  w.op = op;
  p.invoke(0, 1, 0, 1000, {w}, &r, 9);
  Op load;
  load.kind = OpKind::kTransfer;
  load.resource = ResourceClass::kLink;
  load.bytes = 1000;
  p.send(0, 1, load, &r, 10);  // a migration: not a call
  p.wake_at(1.0, &r, 11);
  p.run();
  EXPECT_EQ(seen.in_flight, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(seen.made, (std::vector<std::pair<uint32_t, uint32_t>>{{0, 0}, {0, 1}, {0, UINT32_MAX}}));
  std::sort(r.tokens.begin(), r.tokens.end());
  EXPECT_EQ(r.tokens, (std::vector<uint32_t>{7, 8, 9, 10, 11}));  // each sink hears its own token
  p.server(1).submit(op, &r, 12);
  p.run();
  EXPECT_EQ(seen.in_flight.back(), 0u);  // every earlier call was reported
  EXPECT_EQ(seen.made.back(), (std::pair<uint32_t, uint32_t>{1, 0}));
}

}  // namespace
}  // namespace moesim::harness
