// The real-time cluster platform (exec/exec_cluster_platform.h) under the registry's prism system, with
// in-process servers whose units are mutexes held for a fixed time: the system's ops become calls, run in
// real time, queue on the units they name, and come back to the system on its own thread; a call that fails
// stops the run with the server's name.
#include "exec/exec_cluster_platform.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "serving/cluster_serving.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "traces/trace.h"

namespace moesim::exec {
namespace {

// Units hold a mutex for `work_s` per call (tokens do not matter); an invocation waits `one_way_s` each way.
struct FakeCluster {
  double work_s = 0.004, one_way_s = 0.003;
  std::mutex units[2][2];
  bool fail = false;
};

class FakeCalls : public ServerCalls {
 public:
  FakeCalls(FakeCluster& c, uint32_t self) : c_(c), self_(self) {}
  CallTiming compute(uint32_t unit, uint32_t, uint32_t, uint32_t) override { return work(self_, unit); }
  CallTiming dense(uint32_t unit, uint32_t, uint32_t) override { return work(self_, unit); }
  CallTiming invoke(uint32_t peer, uint32_t, const std::vector<std::array<uint32_t, 3>>& works) override {
    CallTiming t;
    t.start = exec::monotonic_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(c_.one_way_s));
    t.peer_arrived = exec::monotonic_seconds();
    for (const auto& w : works) {
      const CallTiming u = work(peer, w[1]);
      t.works.emplace_back(u.start, u.end);
    }
    t.peer_sent = exec::monotonic_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(c_.one_way_s));
    t.end = exec::monotonic_seconds();
    return t;
  }
  CallTiming push(uint32_t peer, uint32_t, uint32_t) override { return invoke(peer, 0, {}); }

 private:
  CallTiming work(uint32_t server, uint32_t unit) {
    if (c_.fail && server == 0)
      throw Error("connection refused");  // only a: the run names the server that failed
    std::lock_guard<std::mutex> lock(c_.units[server][unit]);
    CallTiming t;
    t.start = exec::monotonic_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(c_.work_s));
    t.end = exec::monotonic_seconds();
    return t;
  }
  FakeCluster& c_;
  uint32_t self_;
};

traces::Trace decode_trace(uint32_t sequences) {
  traces::TraceInfo info;
  info.model = "two-expert";
  info.layers = 1;
  info.experts = 2;
  info.top_k = 1;
  traces::TraceBuilder b(info, false, false, "test");
  for (uint32_t s = 0; s < sequences; ++s)
    for (uint32_t step = 0; step < 3; ++step) {
      const uint32_t e[] = {step % 2};  // alternates: one local, one remote expert for either server
      b.add(s, traces::Phase::kDecode, step, 0, e, {}, {}, s + 1);
    }
  return std::move(b).finish();
}

serving::ClusterInput two_servers() {
  Json j = load_json_file(test::test_data("models/small-moe.json"));
  j["num_layers"] = 1;
  j["moe_layers"] = 1;
  j["routed_experts"] = 2;
  j["top_k"] = 1;
  serving::ClusterInput in;
  in.model = model_from_json(j, "two-expert");
  const HardwareProfile hw = load_hardware("desktop-rtx4090");
  ArrivalSpec a;
  a.kind = ArrivalSpec::Kind::kTimestamps;
  a.times_s = {0, 0.01, 0.02};
  for (const char* name : {"a", "b"})
    in.servers.push_back({name, hw, 2, in.model.bytes_per_expert(), {}, {decode_trace(2)}, a});
  in.links.push_back({0, 1, {125e6, 0.003}});
  return in;
}

std::vector<ExecClusterServer> servers_of(const serving::ClusterInput& in, FakeCluster& c) {
  std::vector<ExecClusterServer> out;
  for (uint32_t n = 0; n < in.servers.size(); ++n)
    out.push_back(
        {in.servers[n].name, in.servers[n].hw, in.servers[n].gpus, std::make_shared<FakeCalls>(c, n)});
  return out;
}

TEST(ExecClusterPlatform, RunsThePrismSystemInRealTime) {
  const serving::ClusterInput in = two_servers();
  FakeCluster fake;
  ExecClusterPlatform p(servers_of(in, fake), in.links, 8);
  serving::ClusterOptions opt;
  opt.placement = "uniform";  // one expert per server: every pass has a remote expert somewhere
  opt.profile_tokens = 1;
  opt.duration_s = 1;
  const serving::ClusterResult r = serving::serve_cluster(in, opt, p);
  ASSERT_EQ(r.requests.size(), 6u);
  uint64_t remote = 0;
  for (uint64_t x : r.remote_invocations) remote += x;
  EXPECT_GT(remote, 0u);
  for (const serving::RequestRecord& q : r.requests) {
    EXPECT_GE(q.arrival, 0);
    // three passes, each at least a dense op and an expert on a unit held for work_s
    EXPECT_GE(q.end - q.arrival, 3 * 2 * fake.work_s);
  }
  uint32_t kinds[5] = {};
  for (const ExecCallRecord& c : p.records()) {
    ++kinds[c.kind];
    EXPECT_LE(c.submitted, c.returned);
    EXPECT_LE(c.submitted - 1e-3, c.timing.start);  // the server's clock, converted to the platform's
    EXPECT_LE(c.timing.end, c.returned + 1e-3);
    if (c.kind == 2) {
      ASSERT_EQ(c.timing.works.size(), 1u);
      EXPECT_GE(c.timing.works[0].first, c.timing.peer_arrived);
    }
  }
  EXPECT_EQ(kinds[0], 18u);  // a dense op per pass: 6 requests x 3 decode tokens
  EXPECT_EQ(kinds[1] + kinds[2], 18u);
  EXPECT_GT(kinds[2], 0u);
}

TEST(ExecClusterPlatform, AFailedCallStopsTheRunNamingTheServer) {
  const serving::ClusterInput in = two_servers();
  FakeCluster fake;
  fake.fail = true;
  ExecClusterPlatform p(servers_of(in, fake), in.links, 2);
  serving::ClusterOptions opt;
  opt.placement = "uniform";
  opt.profile_tokens = 1;
  const std::string e = test::error_of([&] { serving::serve_cluster(in, opt, p); });
  EXPECT_NE(e.find("server a"), std::string::npos) << e;
  EXPECT_NE(e.find("connection refused"), std::string::npos) << e;
}

}  // namespace
}  // namespace moesim::exec
