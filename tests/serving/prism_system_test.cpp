// The prism cluster system (serving/systems/prism_system.cpp) on the simulated cluster
// (sim/sim_cluster_platform.h, through harness::simulate_cluster): a two-server case worked by hand (a remote
// expert costs two transfers, its compute and its queueing, exactly), migration happens iff Prism's Eq. 4
// holds, bad inputs (another model's traces, a placement that cannot cover), and same seed -> bit-identical
// results.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/cost_model.h"
#include "core/op_graph.h"
#include "harness/cluster/cluster_job.h"
#include "serving/cluster_serving.h"
#include "serving/system.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/serving/cluster_inputs.h"
#include "traces/trace_io.h"

namespace moesim::serving {
namespace {

ClusterResult run_cluster(const ClusterInput& in, const ClusterOptions& opt) {
  return harness::simulate_cluster(in, opt);
}

using test::error_of;

ModelSpec two_expert_model(uint32_t experts = 2) {
  return test::one_layer_cluster_model("two-expert", experts);
}
traces::Trace decode_trace(const std::vector<uint32_t>& experts, uint32_t model_experts = 2) {
  return test::one_token_trace(experts, model_experts, "two-expert");
}
ArrivalSpec at(std::vector<double> times) {
  return test::arrivals_at(std::move(times));
}

// a and b, one GPU each with room for one expert, linked by `link`. a's profile (its first sequence) uses
// expert 0, b's expert 1, so that prism places expert 0 on a and expert 1 on b.
ClusterInput two_servers(const std::vector<uint32_t>& a_seqs, std::vector<double> a_times,
                         std::vector<double> b_times, LinkParams link) {
  ClusterInput in;
  in.model = two_expert_model();
  const HardwareProfile hw = load_hardware("desktop-rtx4090");
  in.servers.push_back(
      {"a", hw, 1, in.model.bytes_per_expert(), {}, {decode_trace(a_seqs)}, at(std::move(a_times))});
  in.servers.push_back(
      {"b", hw, 1, in.model.bytes_per_expert(), {}, {decode_trace({1})}, at(std::move(b_times))});
  in.links.push_back({0, 1, link});
  return in;
}

ClusterOptions options() {
  ClusterOptions o;
  o.placement = "prism";
  o.profile_tokens = 1;  // the first sequence
  o.duration_s = 1000;
  return o;
}

struct Costs {
  double dense, expert, transfer;
};
Costs hand_costs(const ClusterInput& in) {
  const CostModel cm(in.servers[0].hw);
  Op dense;
  dense.kind = OpKind::kDenseCompute;
  dense.resource = ResourceClass::kGpu;
  dense.bytes = in.model.dense_bytes_per_layer();
  dense.flops = 2.0 * static_cast<double>(dense.bytes / dtype_size(in.model.dtype));
  dense.tokens = 1;
  Op expert;
  expert.kind = OpKind::kExpertCompute;
  expert.resource = ResourceClass::kGpu;
  expert.bytes = in.model.bytes_per_expert();
  expert.flops = in.model.expert_flops_per_token();
  expert.tokens = 1;
  const double act = static_cast<double>(in.model.hidden_size * dtype_size(in.model.dtype));
  return {cm.duration(dense), cm.duration(expert),
          in.links[0].params.latency + act / in.links[0].params.bandwidth};
}

TEST(PrismSystem, TwoServersByHand) {
  // a: request 0 at t = 0 uses expert 0 (local), request 1 at t = 100 expert 1 (on b).
  const LinkParams link{100e9 / 8, 1e-6};  // 100 Gbit/s, 1 us: shorter than an expert
  const ClusterInput idle = two_servers({0, 1}, {0, 100}, {}, link);
  const Costs c = hand_costs(idle);
  const ClusterResult r = run_cluster(idle, options());
  ASSERT_EQ(r.initial_placement.replicas[0], (std::vector<Replica>{{0, 0}}));
  ASSERT_EQ(r.initial_placement.replicas[1], (std::vector<Replica>{{1, 0}}));
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_NEAR(r.requests[0].end - r.requests[0].arrival, c.dense + c.expert, 1e-12);
  // Remote: the dense part, the activations there, the expert on b, the result back.
  EXPECT_NEAR(r.requests[1].end - r.requests[1].arrival, c.dense + c.transfer + c.expert + c.transfer, 1e-12);
  EXPECT_EQ(r.remote_invocations[0], 1u);
  EXPECT_EQ(r.local_invocations[0], 1u);
  EXPECT_EQ(r.links[0].bytes, idle.model.hidden_size * 2);  // a -> b: one token's activations
  EXPECT_EQ(r.links[1].bytes, idle.model.hidden_size * 2);

  // b's own request at t = 100 takes b's GPU first (its dense part, then expert 1): a's activations arrive
  // while b computes and queue until it is done.
  const ClusterInput busy = two_servers({0, 1}, {0, 100}, {100}, link);
  ASSERT_LT(c.transfer, c.expert);  // the case needs the activations to arrive before b's expert ends
  const ClusterResult q = run_cluster(busy, options());
  ASSERT_EQ(q.requests.size(), 3u);  // a at 0; at 100 b's (scheduled first) and a's
  const RequestRecord& b_req = q.requests[1];
  const RequestRecord& a_req = q.requests[2];
  ASSERT_EQ(b_req.server, 1u);
  ASSERT_EQ(a_req.server, 0u);
  const double queueing = c.expert - c.transfer;
  EXPECT_NEAR(a_req.end - a_req.arrival, c.dense + c.transfer + queueing + c.expert + c.transfer, 1e-12);
  EXPECT_NEAR(b_req.end - b_req.arrival, c.dense + c.expert, 1e-12);
}

// Servers named a, b, c... with one GPU holding one expert each; server i's first sequence (its profile)
// uses expert profile[i], so that prism places that expert there. Its requests then use seqs[i].
ClusterInput line_of(uint32_t experts, const std::vector<std::vector<uint32_t>>& seqs,
                     const std::vector<std::vector<double>>& times, std::vector<ClusterLinkSpec> links) {
  ClusterInput in;
  in.model = two_expert_model(experts);
  const HardwareProfile hw = load_hardware("desktop-rtx4090");
  for (size_t i = 0; i < seqs.size(); ++i)
    in.servers.push_back({std::string(1, static_cast<char>('a' + i)),
                          hw,
                          1,
                          in.model.bytes_per_expert(),
                          {},
                          {decode_trace(seqs[i], experts)},
                          at(times[i])});
  in.links = std::move(links);
  return in;
}

TEST(PrismSystem, RemoteOverTwoHops) {
  // a - b - c: a's second request needs expert 2, held by c only: two hops out, two back.
  const LinkParams link{100e9 / 8, 1e-6};
  const ClusterInput in = line_of(3, {{0, 2}, {1}, {2}}, {{0, 100}, {}, {}}, {{0, 1, link}, {1, 2, link}});
  const Costs c = hand_costs(in);
  const ClusterResult r = run_cluster(in, options());
  ASSERT_EQ(r.initial_placement.replicas[2], (std::vector<Replica>{{2, 0}}));
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_NEAR(r.requests[1].end - r.requests[1].arrival, c.dense + 4 * c.transfer + c.expert, 1e-12);
  for (const auto& l : r.links) EXPECT_EQ(l.messages, 1u) << l.from << " -> " << l.to;
}

TEST(PrismSystem, RemoteGoesToTheReplicaThatFinishesFirst) {
  // Expert 1 lives on b and c. Alone, a's request takes b (the first replica); when b's own request holds
  // b's GPU, c finishes first.
  const LinkParams link{100e9 / 8, 1e-6};
  const std::vector<ClusterLinkSpec> mesh{{0, 1, link}, {0, 2, link}, {1, 2, link}};
  const ClusterInput quiet = line_of(2, {{0, 1}, {1}, {1}}, {{0, 100}, {}, {}}, mesh);
  const ClusterResult q = run_cluster(quiet, options());
  ASSERT_EQ(q.initial_placement.replicas[1], (std::vector<Replica>{{1, 0}, {2, 0}}));
  EXPECT_EQ(q.links[0].bytes, quiet.model.hidden_size * 2);  // a -> b
  EXPECT_EQ(q.links[2].bytes, 0u);                           // a -> c
  const ClusterInput busy = line_of(2, {{0, 1}, {1}, {1}}, {{0, 100}, {100}, {}}, mesh);
  const Costs c = hand_costs(busy);
  const ClusterResult r = run_cluster(busy, options());
  EXPECT_EQ(r.links[0].bytes, 0u);
  EXPECT_EQ(r.links[2].bytes, busy.model.hidden_size * 2);
  const RequestRecord& a = r.requests[2];
  ASSERT_EQ(a.server, 0u);
  EXPECT_NEAR(a.end - a.arrival, c.dense + c.transfer + c.expert + c.transfer, 1e-12);
}

TEST(PrismSystem, PromptThenTokensByHand) {
  // One server; a sequence of 2 prompt tokens and 2 generated ones, all on expert 0: the prompt is one pass
  // of 2 tokens (TTFT), then a pass per generated token.
  traces::TraceInfo info;
  info.layers = 1;
  info.experts = 2;
  info.top_k = 1;
  traces::TraceBuilder b(info, false, false, "test");
  const uint32_t e0[] = {0};
  b.add(0, traces::Phase::kPrefill, 0, 0, e0, {}, {}, 1);
  b.add(0, traces::Phase::kPrefill, 1, 0, e0, {}, {}, 2);
  b.add(0, traces::Phase::kDecode, 0, 0, e0, {}, {}, 3);
  b.add(0, traces::Phase::kDecode, 1, 0, e0, {}, {}, 4);
  ClusterInput in;
  in.model = two_expert_model();
  in.servers.push_back({"a",
                        load_hardware("desktop-rtx4090"),
                        1,
                        2 * in.model.bytes_per_expert(),
                        {},
                        {std::move(b).finish()},
                        at({0})});
  const CostModel cm(in.servers[0].hw);
  auto op = [&](OpKind kind, uint32_t tokens) {
    Op o;
    o.kind = kind;
    o.resource = ResourceClass::kGpu;
    o.tokens = tokens;
    o.bytes = kind == OpKind::kDenseCompute ? in.model.dense_bytes_per_layer() : in.model.bytes_per_expert();
    o.flops = kind == OpKind::kDenseCompute ? 2.0 * static_cast<double>(o.bytes / 2) * tokens
                                            : in.model.expert_flops_per_token() * tokens;
    return cm.duration(o);
  };
  const ClusterResult r = run_cluster(in, options());
  ASSERT_EQ(r.requests.size(), 1u);
  const RequestRecord& q = r.requests[0];
  const double ttft = op(OpKind::kDenseCompute, 2) + op(OpKind::kExpertCompute, 2);
  EXPECT_NEAR(q.first_token, ttft, 1e-12);
  EXPECT_EQ(q.tokens_after_first, 2u);
  EXPECT_NEAR(q.end, ttft + 2 * (op(OpKind::kDenseCompute, 1) + op(OpKind::kExpertCompute, 1)), 1e-12);
}

TEST(PrismSystem, MigratesIffEq4Holds) {
  // a's profile says expert 0 but its requests then use expert 1 (on b): the accumulated load makes
  // expert 1 worth moving to a once enough remote invocations have piled up.
  std::vector<uint32_t> seqs{0};
  std::vector<double> times;
  for (int i = 0; i < 40; ++i) seqs.push_back(1);
  for (int i = 0; i < 41; ++i) times.push_back(1.0 * i);
  ClusterInput in = two_servers(seqs, times, {}, {1e9 / 8, 20e-6});
  // A slow GPU I/O (Eq. 3's speed): moving two experts in and two out costs about ten remote invocations.
  const Costs c = hand_costs(in);
  const double remote_s = c.transfer + c.expert + c.transfer;
  for (auto& s : in.servers) {
    s.hw.link_kind = "pcie";
    s.hw.link_bandwidth = static_cast<double>(in.model.bytes_per_expert()) * 4 / (10 * remote_s);
  }
  ClusterOptions o = options();
  o.migrate_every_s = 2.5;  // checks at 2.5 s (about 2 remote invocations), 5 s, ...
  const ClusterResult r = run_cluster(in, o);
  ASSERT_GE(r.decisions.size(), 2u);
  bool kept = false;
  for (const MigrationRecord& d : r.decisions) {
    EXPECT_EQ(d.migrated, d.cost_new_s + d.migration_s < d.cost_current_s) << "check at " << d.time_s;
    kept = kept || !d.migrated;
  }
  EXPECT_TRUE(kept) << "the early checks keep the placement";
  ASSERT_EQ(r.migrations.size(), 1u);
  EXPECT_GT(r.migrations[0].time_s, 2.5);
  EXPECT_EQ(r.final_placement.replicas[1], (std::vector<Replica>{{0, 0}}));
  // After the move a's requests run locally: the last ones take no network time.
  const RequestRecord& last = r.requests.back();
  EXPECT_NEAR(last.end - last.arrival, c.dense + c.expert, 1e-12);
}

TEST(PrismSystem, PlacementThatCannotCoverNamesTheLayer) {
  ClusterInput in = two_servers({0}, {0}, {}, {1e9 / 8, 20e-6});
  in.servers[1].gpu_memory = in.model.bytes_per_expert() / 2;
  const std::string e = error_of([&] { run_cluster(in, options()); });
  EXPECT_NE(e.find("layer 0"), std::string::npos) << e;
  EXPECT_NE(e.find("more than"), std::string::npos) << e;
}

TEST(PrismSystem, TracesOfAnotherModel) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("moesim_cluster_sim_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  traces::save_mtr(decode_trace({0, 3}, 4), (dir / "four.mtr").string());
  ClusterSpec spec;
  spec.origin = "s.json";
  spec.model = test::test_data("models/tiny-moe.json");
  spec.network = LinkParams{1e8, 1e-3};
  spec.servers.push_back({"a", "desktop-rtx4090", 1, 1 << 30, {(dir / "four.mtr").string()}, at({0})});
  const std::string e = error_of([&] { load_cluster_input(spec); });
  EXPECT_NE(e.find("s.json: servers[0].traces[0]: "), std::string::npos) << e;
  EXPECT_NE(e.find("(1 MoE layers x 4 experts); the cluster's model tiny-moe has 4 x 16"), std::string::npos)
      << e;
  std::filesystem::remove_all(dir);
}

TEST(PrismSystem, RefusesArrivalsNoRunCouldKeep) {
  ClusterInput in = two_servers({0}, {}, {}, {1e8 / 8, 1e-3});
  in.servers[0].arrival = ArrivalSpec{ArrivalSpec::Kind::kPoisson, 1e-9, {}, "poisson:1ns", ""};
  const std::string e = error_of([&] { run_cluster(in, options()); });
  EXPECT_NE(e.find("about 1000000000000 requests"), std::string::npos) << e;
}

TEST(PrismSystem, SameSeedSameResult) {
  ClusterInput in = two_servers({0, 1, 1, 0}, {}, {}, {1e8 / 8, 1e-3});
  for (auto& s : in.servers) s.arrival = ArrivalSpec{ArrivalSpec::Kind::kPoisson, 2.0, {}, "poisson:2s", ""};
  ClusterOptions o = options();
  o.placement = "uniform";
  o.random_draw = true;
  o.duration_s = 300;
  o.migrate_every_s = 60;
  const std::string first = cluster_result_json(in, o, run_cluster(in, o)).dump();
  EXPECT_EQ(first, cluster_result_json(in, o, run_cluster(in, o)).dump());
  o.seed = 2;
  EXPECT_NE(first, cluster_result_json(in, o, run_cluster(in, o)).dump());
}

TEST(PrismSystem, IsAClusterSystemOfTheRegistry) {
  const std::unique_ptr<System> prism = make_system(PolicySpec{"prism", {}});
  EXPECT_TRUE(system_traits(PolicySpec{"prism", {}}).cluster);
  ASSERT_NE(prism->cluster(), nullptr);
  EXPECT_EQ(make_system(PolicySpec{"offload", {}})->cluster(), nullptr);
  EXPECT_NE(error_of([] {
              make_cluster_system(PolicySpec{"offload", {}});
            }).find("cluster systems: moe-infinity, prism"),
            std::string::npos);
  ClusterInput in = two_servers({0}, {0}, {}, {100e6, 0.001});
  ClusterOptions o = options();
  o.system = PolicySpec{"zipmoe", {}};
  EXPECT_NE(error_of([&] { run_cluster(in, o); }).find("serves one device"), std::string::npos);
}

}  // namespace
}  // namespace moesim::serving
