// The moe-infinity cluster system (serving/systems/moe_infinity_system.cpp) on the simulated cluster
// (sim/sim_cluster_platform.h, through harness::simulate_cluster): a miss costs exactly the expert's load
// over the host link more than a hit, the GPU's cache holds what its memory holds, a second lookup of an
// expert still loading waits for that load, redirection sends a request to the idle server and is a no-op
// with one server, and same seed -> bit-identical results.
#include <gtest/gtest.h>

#include "core/cost_model.h"
#include "core/op_graph.h"
#include "harness/cluster/cluster_job.h"
#include "serving/cluster_serving.h"
#include "serving/system.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/serving/cluster_inputs.h"

namespace moesim::serving {
namespace {

using test::error_of;

ModelSpec one_layer_model(uint32_t experts = 4) {
  return test::one_layer_cluster_model("one-layer", experts);
}
traces::Trace decode_trace(const std::vector<uint32_t>& experts, uint32_t model_experts = 4) {
  return test::one_token_trace(experts, model_experts, "one-layer");
}
ArrivalSpec at(std::vector<double> times) {
  return test::arrivals_at(std::move(times));
}

ClusterServer server(const std::string& name, const ModelSpec& m, uint32_t gpus, uint64_t cached_experts,
                     const std::vector<uint32_t>& seqs, std::vector<double> times) {
  return {name,
          load_hardware("desktop-rtx4090"),
          gpus,
          cached_experts * m.bytes_per_expert(),
          {},
          {decode_trace(seqs)},
          at(std::move(times))};
}

ClusterOptions options(const std::string& system = "moe-infinity") {
  ClusterOptions o;
  o.system = PolicySpec{system, {}};
  o.placement = "";
  o.duration_s = 1000;
  return o;
}

ClusterResult run(const ClusterInput& in, const ClusterOptions& opt) {
  return harness::simulate_cluster(in, opt);
}

double latency(const ClusterResult& r, size_t i) {
  return r.requests[i].end - r.requests[i].arrival;
}

struct Costs {
  double dense, expert, load;
};
Costs hand_costs(const ClusterInput& in) {
  const CostModel cm(in.servers[0].hw);
  const Op dense = cluster_compute_op(in.model, OpKind::kDenseCompute, 0, 1);
  const Op expert = cluster_compute_op(in.model, OpKind::kExpertCompute, 0, 1, 0);
  return {cm.duration(dense), cm.duration(expert),
          static_cast<double>(in.model.bytes_per_expert()) / in.servers[0].hw.link_bandwidth};
}

TEST(MoeInfinitySystem, AMissCostsTheLoadMoreThanAHit) {
  // One GPU holding one expert. Expert 0 (miss), 0 (hit), 1 (miss, evicts 0), 0 (miss again), far apart.
  ClusterInput in;
  in.model = one_layer_model();
  in.servers.push_back(server("a", in.model, 1, 1, {0, 0, 1, 0}, {0, 100, 200, 300}));
  const Costs c = hand_costs(in);
  ASSERT_GT(c.load, c.expert);
  const ClusterResult r = run(in, options());
  ASSERT_EQ(r.requests.size(), 4u);
  EXPECT_NEAR(latency(r, 1), c.dense + c.expert, 1e-12);
  EXPECT_NEAR(latency(r, 0) - latency(r, 1), c.load, 1e-12);  // bytes / the host link's bandwidth
  EXPECT_NEAR(latency(r, 2), latency(r, 0), 1e-12);
  EXPECT_NEAR(latency(r, 3), latency(r, 0), 1e-12);  // the cache held one expert: 0 was evicted
  ASSERT_EQ(r.offload.size(), 1u);
  EXPECT_EQ(r.offload[0].lookups, 4u);
  EXPECT_EQ(r.offload[0].hits, 1u);
  EXPECT_EQ(r.offload[0].loads, 3u);
  EXPECT_EQ(r.offload[0].load_bytes, 3 * in.model.bytes_per_expert());
  EXPECT_EQ(r.local_invocations[0], 4u);
  EXPECT_EQ(r.remote_invocations[0], 0u);
}

TEST(MoeInfinitySystem, TheCacheHoldsWhatItsMemoryHolds) {
  // Three experts in turn, twice: a GPU of three experts misses each once, one of two misses every time (LRU
  // and LFU alike evict the expert needed next in this cycle).
  for (const std::string cache : {"lfu", "lru"}) {
    ClusterInput in;
    in.model = one_layer_model();
    in.servers.push_back(server("a", in.model, 1, 3, {0, 1, 2, 0, 1, 2}, {0, 10, 20, 30, 40, 50}));
    ClusterOptions o = options();
    o.system = PolicySpec{"moe-infinity", {{"cache", cache}}};
    EXPECT_EQ(run(in, o).offload[0].loads, 3u) << cache;
    in.servers[0].gpu_memory = 2 * in.model.bytes_per_expert();
    EXPECT_EQ(run(in, o).offload[0].loads, 6u) << cache;
  }
  // Two GPUs, each with room for one expert: experts 0 and 2 share GPU 0, 1 and 3 GPU 1 (key % GPUs).
  ClusterInput in;
  in.model = one_layer_model();
  in.servers.push_back(server("a", in.model, 2, 1, {0, 1, 0, 1, 2, 0}, {0, 10, 20, 30, 40, 50}));
  EXPECT_EQ(run(in, options()).offload[0].loads, 4u);  // 0, 1, then 2 evicts 0, and 0 again
}

TEST(MoeInfinitySystem, ALookupOfAnExpertStillLoadingWaitsForItsLoad) {
  ClusterInput in;
  in.model = one_layer_model();
  in.servers.push_back(server("a", in.model, 1, 1, {0, 0}, {0, 0}));
  const Costs c = hand_costs(in);
  const ClusterResult r = run(in, options());
  EXPECT_EQ(r.offload[0].loads, 1u);
  EXPECT_EQ(r.offload[0].hits, 1u);
  // Both dense parts, then the one load (from the first dense part's end), then both experts.
  EXPECT_NEAR(latency(r, 0), c.dense + c.load + c.expert, 1e-12);
  EXPECT_NEAR(latency(r, 1), c.dense + c.load + 2 * c.expert, 1e-12);
}

// a receives two requests at once, b none; a and b are linked.
ClusterInput two_servers(std::vector<double> b_times = {}) {
  ClusterInput in;
  in.model = one_layer_model();
  in.servers.push_back(server("a", in.model, 1, 4, {0, 1}, {0, 1e-6}));
  in.servers.push_back(server("b", in.model, 1, 4, {2}, std::move(b_times)));
  in.links.push_back({0, 1, LinkParams{100e9 / 8, 1e-6}});  // faster than a pass
  return in;
}

TEST(MoeInfinitySystem, RedirectionSendsARequestToTheIdleServer) {
  const ClusterInput in = two_servers();
  ClusterOptions o = options();
  const ClusterResult stay = run(in, o);
  EXPECT_EQ(stay.offload[0].served, 2u);
  EXPECT_EQ(stay.offload[1].served, 0u);
  EXPECT_EQ(stay.links[0].messages, 0u);
  o.system = PolicySpec{"moe-infinity", {{"redirect", "1"}}};
  const ClusterResult lb = run(in, o);
  // The first request finds every server idle and stays; the second goes to idle b.
  EXPECT_EQ(lb.offload[0].served, 1u);
  EXPECT_EQ(lb.offload[1].served, 1u);
  EXPECT_EQ(lb.offload[0].redirected, 1u);
  ASSERT_EQ(lb.requests.size(), 2u);
  EXPECT_EQ(lb.requests[1].server, 0u);  // reported by the server it arrived at
  EXPECT_EQ(lb.links[0].messages, 1u);   // its token ids a -> b, and back
  EXPECT_EQ(lb.links[1].messages, 1u);
  EXPECT_EQ(lb.links[0].bytes, 4u);  // one token
  // There: the request's ids over the link, its pass on b, the reply back; not behind a's first request.
  const double link = 1e-6 + 4 / (100e9 / 8);
  EXPECT_NEAR(latency(lb, 1), latency(lb, 0) + 2 * link, 1e-12);
  EXPECT_LT(latency(lb, 1), latency(stay, 1));
}

TEST(MoeInfinitySystem, RedirectionWithOneServerChangesNothing) {
  ClusterInput in;
  in.model = one_layer_model();
  in.servers.push_back(server("a", in.model, 2, 2, {0, 1, 2, 3, 0, 2}, {}));
  in.servers[0].arrival = ArrivalSpec{ArrivalSpec::Kind::kPoisson, 1e-4, {}, "poisson:0.1ms", ""};
  ClusterOptions o = options();
  o.duration_s = 0.05;
  const std::string plain = cluster_result_json(in, o, run(in, o)).dump();
  o.system = PolicySpec{"moe-infinity", {{"redirect", "1"}}};
  std::string lb = cluster_result_json(in, o, run(in, o)).dump();
  // Only the system's name in the config differs.
  const std::string name = "\"moe-infinity:redirect=1\"";
  ASSERT_NE(lb.find(name), std::string::npos);
  lb.replace(lb.find(name), name.size(), "\"moe-infinity\"");
  EXPECT_EQ(plain, lb);
}

TEST(MoeInfinitySystem, SameSeedSameResult) {
  ClusterInput in = two_servers();
  for (auto& s : in.servers)
    s.arrival = ArrivalSpec{ArrivalSpec::Kind::kPoisson, 1e-4, {}, "poisson:0.1ms", ""};
  ClusterOptions o = options();
  o.system = PolicySpec{"moe-infinity", {{"redirect", "1"}}};
  o.random_draw = true;
  o.duration_s = 0.05;
  const ClusterResult first = run(in, o);
  EXPECT_GT(first.offload[0].redirected + first.offload[1].redirected, 0u);
  const std::string text = cluster_result_json(in, o, first).dump();
  EXPECT_EQ(text, cluster_result_json(in, o, run(in, o)).dump());
  o.seed = 2;
  EXPECT_NE(text, cluster_result_json(in, o, run(in, o)).dump());
}

TEST(MoeInfinitySystem, IsAClusterSystemThatPlacesNothing) {
  EXPECT_TRUE(system_traits(PolicySpec{"moe-infinity", {}}).cluster);
  EXPECT_FALSE(system_traits(PolicySpec{"moe-infinity", {}}).places_experts);
  EXPECT_TRUE(system_traits(PolicySpec{"prism", {}}).places_experts);
  EXPECT_NE(error_of([] {
              make_system(PolicySpec{"moe-infinity", {{"redirect", "2"}}});
            }).find("redirect must be"),
            std::string::npos);
  // A GPU memory below one expert is no cache.
  ClusterInput in;
  in.model = one_layer_model();
  in.servers.push_back(server("a", in.model, 1, 0, {0}, {0}));
  in.servers[0].gpu_memory = in.model.bytes_per_expert() / 2;
  EXPECT_NE(error_of([&] { run(in, options()); }).find("server \"a\""), std::string::npos);
}

}  // namespace
}  // namespace moesim::serving
