// The cluster's expert RPC end to end on loopback: an in-process ExpertServer on 127.0.0.1:0 and
// ExpertClients, against kernels::expert_ffn computed locally.
#include "exec/expert_service.h"

#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "base/rng.h"
#include "exec/cluster_rpc.grpc.pb.h"
#include "exec/expert_client.h"
#include "exec/expert_naming.h"
#include "exec/store_writer.h"
#include "exec/weight_source.h"
#include "exec/weight_synth.h"
#include "exec_test_util.h"
#include "kernels/expert_ffn.h"

namespace moesim::exec {
namespace {

const ModelShape kShape{2, 4, 64, 96};
const std::string kSecret = "s3cret-of-this-run";

std::vector<float> random_activations(uint64_t tokens, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(tokens * kShape.hidden);
  for (auto& v : x) v = static_cast<float>(rng.normal());
  return x;
}

// kernels::expert_ffn over each work's rows, as the server must compute them.
std::vector<float> local_outputs(const ExpertWeights& w, const ComputeCall& call) {
  std::vector<float> y(call.activations.size());
  uint64_t row = 0;
  for (const auto& work : call.works) {
    const auto t = w.get(call.layer, work.expert);
    kernels::expert_ffn(t->gate.data(), t->up.data(), t->down.data(), kShape.hidden, kShape.inter,
                        call.activations.data() + row * kShape.hidden, y.data() + row * kShape.hidden, work.tokens);
    row += work.tokens;
  }
  return y;
}

ComputeCall call_of(uint32_t layer, std::vector<RemoteWork> works, uint64_t seed = 7) {
  ComputeCall c;
  c.request_id = 42;
  c.layer = layer;
  uint64_t tokens = 0;
  for (const auto& w : works) tokens += w.tokens;
  c.works = std::move(works);
  c.activations = random_activations(tokens, seed);
  return c;
}

const std::vector<ExpertKey> kHeld{{0, 0}, {0, 1}, {1, 2}};

std::unique_ptr<ExpertServer> start(uint32_t units, std::function<void(uint32_t)> hook = {},
                                    uint32_t max_tokens = 64) {
  ExpertServerOptions o;
  o.secret = kSecret;
  o.units = units;
  o.max_tokens = max_tokens;
  o.before_compute = std::move(hook);
  return std::make_unique<ExpertServer>(synth_expert_weights(kShape, kHeld, 3), o);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The RpcError a call throws (its code and message), or code 0 when it succeeded.
template <class F>
std::pair<int, std::string> rpc_error_of(F&& f) {
  try {
    f();
  } catch (const RpcError& e) {
    return {e.code(), e.what()};
  }
  return {0, ""};
}

TEST(ExpertService, RemoteComputeEqualsLocalBitForBit) {
  auto server = start(2);
  ASSERT_GT(server->port(), 0);
  EXPECT_EQ(server->address(), "127.0.0.1:" + std::to_string(server->port()));
  ExpertClient client(server->address(), kSecret, server->max_message_bytes());
  const ComputeCall call = call_of(0, {{1, 0, 3}, {0, 1, 1}});
  const ComputeResult r = client.compute(call);
  EXPECT_EQ(r.request_id, 42u);
  EXPECT_TRUE(same_bits(r.outputs, local_outputs(server->weights(), call)));
  ASSERT_EQ(r.intervals.size(), 2u);
  for (const auto& i : r.intervals) {
    EXPECT_LE(r.arrived, i.start);
    EXPECT_LE(i.start, i.end);
    EXPECT_LE(i.end, r.sent);
  }
}

TEST(ExpertService, AsyncCallsInFlightAtOnce) {
  auto server = start(2);
  ExpertClient client(server->address(), kSecret, server->max_message_bytes());
  std::vector<ComputeCall> calls;
  std::vector<std::future<ComputeResult>> futures;
  for (uint32_t i = 0; i < 6; ++i) calls.push_back(call_of(i % 2, {{i % 2 ? 2u : i % 3 == 0 ? 0u : 1u, i % 2, 1 + i}}, i));
  for (const auto& c : calls) futures.push_back(client.compute_async(c));
  for (size_t i = 0; i < calls.size(); ++i)
    EXPECT_TRUE(same_bits(futures[i].get().outputs, local_outputs(server->weights(), calls[i]))) << i;
}

TEST(ExpertService, ClientsAndServersComeAndGo) {
  // gRPC destroys an asynchronous call's state on one of its callback threads; when that state held the
  // channel's last reference (the client gone first, then the server), the callback queue was released from
  // its own thread and freed twice (ASan: double-free). The client now drops the channel itself.
  for (int round = 0; round < 8; ++round) {
    auto server = start(1);
    auto client = std::make_unique<ExpertClient>(server->address(), kSecret, server->max_message_bytes());
    const ComputeCall call = call_of(0, {{0, 0, 1}}, static_cast<uint64_t>(round));
    EXPECT_TRUE(same_bits(client->compute_async(call).get().outputs, local_outputs(server->weights(), call)));
    client.reset();
    server.reset();
  }
}

TEST(ExpertService, TwoUnitsComputeAtOnce) {
  // Each work waits inside its interval until both units are inside one: they can only both get there when
  // the units run at once, and then the intervals overlap.
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  bool met = true;
  auto server = start(2, [&](uint32_t) {
    std::unique_lock lock(mu);
    ++inside;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return inside >= 2; })) met = false;
  });
  ExpertClient client(server->address(), kSecret, server->max_message_bytes());
  const ComputeResult r = client.compute(call_of(0, {{0, 0, 2}, {1, 1, 2}}));
  EXPECT_TRUE(met);
  ASSERT_EQ(r.intervals.size(), 2u);
  EXPECT_LE(std::max(r.intervals[0].start, r.intervals[1].start),
            std::min(r.intervals[0].end, r.intervals[1].end));
}

TEST(ExpertService, OneUnitRunsWorksInOrder) {
  std::mutex mu;
  std::vector<uint32_t> units_seen;
  auto server = start(1, [&](uint32_t u) {
    const std::lock_guard lock(mu);
    units_seen.push_back(u);
  });
  ExpertClient client(server->address(), kSecret, server->max_message_bytes());
  const ComputeCall call = call_of(0, {{0, 0, 3}, {1, 0, 1}, {0, 0, 2}});
  const ComputeResult r = client.compute(call);
  EXPECT_TRUE(same_bits(r.outputs, local_outputs(server->weights(), call)));
  ASSERT_EQ(r.intervals.size(), 3u);
  EXPECT_GE(r.intervals[1].start, r.intervals[0].end);
  EXPECT_GE(r.intervals[2].start, r.intervals[1].end);
  EXPECT_EQ(units_seen, (std::vector<uint32_t>{0, 0, 0}));
}

TEST(ExpertService, WrongOrMissingSecretIsUnauthenticated) {
  auto server = start(1);
  ExpertClient wrong(server->address(), "not-the-secret", server->max_message_bytes());
  auto [code, msg] = rpc_error_of([&] { wrong.compute(call_of(0, {{0, 0, 1}})); });
  EXPECT_EQ(code, static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)) << msg;
  EXPECT_NE(msg.find("x-moesim-secret"), std::string::npos) << msg;
  EXPECT_EQ(rpc_error_of([&] { wrong.load_expert(0, 0, *server->weights().get(0, 1)); }).first,
            static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_EQ(rpc_error_of([&] { wrong.drop_expert(0, 0); }).first,
            static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_EQ(rpc_error_of([&] { wrong.ping(5); }).first, static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_TRUE(server->weights().get(0, 0));  // the refused drop did nothing

  // No metadata at all: a raw stub.
  auto stub = cluster::ExpertService::NewStub(
      grpc::CreateChannel(server->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  cluster::PingReply rep;
  EXPECT_EQ(stub->Ping(&ctx, cluster::PingRequest(), &rep).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST(ExpertService, BadRequestsAreInvalidArgumentNamingTheField) {
  auto server = start(2);
  ExpertClient client(server->address(), kSecret, server->max_message_bytes());
  auto [code, msg] = rpc_error_of([&] { client.compute(call_of(0, {{0, 0, 1}, {70, 1, 1}})); });
  EXPECT_EQ(code, static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(msg.find("work[1].expert: 70 >= 4 experts"), std::string::npos) << msg;

  ComputeCall short_x = call_of(0, {{0, 0, 3}});
  short_x.activations.pop_back();
  std::tie(code, msg) = rpc_error_of([&] { client.compute(short_x); });
  EXPECT_EQ(code, static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(msg.find("activations: 764 bytes, expected 768"), std::string::npos) << msg;

  std::tie(code, msg) = rpc_error_of([&] { client.compute(call_of(0, {{0, 2, 1}})); });
  EXPECT_NE(msg.find("work[0].gpu: 2 >= 2 units"), std::string::npos) << msg;

  ExpertTensors t = *server->weights().get(0, 0);
  t.down.pop_back();
  std::tie(code, msg) = rpc_error_of([&] { client.load_expert(0, 3, t); });
  EXPECT_EQ(code, static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(msg.find("down: 12286 bytes, expected 12288"), std::string::npos) << msg;
  EXPECT_FALSE(server->weights().get(0, 3));
}

TEST(ExpertService, OversizedMessageIsRefusedByGrpc) {
  auto server = start(1, {}, 8);
  ExpertClient big(server->address(), kSecret, uint64_t{64} << 20);  // sends what the server refuses
  const uint32_t tokens = static_cast<uint32_t>(server->max_message_bytes() / (kShape.hidden * 4) + 1);
  auto [code, msg] = rpc_error_of([&] { big.compute(call_of(0, {{0, 0, tokens}})); });
  EXPECT_EQ(code, static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED)) << msg;
}

TEST(ExpertService, TooManyTokensIsInvalidArgument) {
  auto server = start(1, {}, 8);
  ExpertClient client(server->address(), kSecret, server->max_message_bytes());
  auto [code, msg] = rpc_error_of([&] { client.compute(call_of(0, {{0, 0, 5}, {1, 0, 4}})); });
  EXPECT_EQ(code, static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(msg.find("work[1].tokens: the works' tokens add up to 9 > 8"), std::string::npos) << msg;
}

TEST(ExpertService, LoadExpertThenComputeUsesTheNewWeights) {
  auto server = start(1);
  ExpertClient client(server->address(), kSecret, server->max_message_bytes());
  const ComputeCall call = call_of(0, {{1, 0, 2}});
  const std::vector<float> before = client.compute(call).outputs;

  const ExpertWeights fresh = synth_expert_weights(kShape, {{0, 1}, {1, 3}}, 99);
  EXPECT_TRUE(client.load_expert(0, 1, *fresh.get(0, 1)));   // replaces
  EXPECT_FALSE(client.load_expert(1, 3, *fresh.get(1, 3)));  // new here
  const std::vector<float> after = client.compute(call).outputs;
  EXPECT_FALSE(same_bits(before, after));
  EXPECT_TRUE(same_bits(after, local_outputs(fresh, call)));
  const ComputeCall migrated = call_of(1, {{3, 0, 1}});
  EXPECT_TRUE(same_bits(client.compute(migrated).outputs, local_outputs(fresh, migrated)));
}

TEST(ExpertService, ExpertNotHeldIsRefusedNamingIt) {
  auto server = start(1);
  ExpertClient client(server->address(), kSecret, server->max_message_bytes());
  auto [code, msg] = rpc_error_of([&] { client.compute(call_of(1, {{2, 0, 1}, {3, 0, 1}})); });
  EXPECT_EQ(code, static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION));
  EXPECT_NE(msg.find("work[1].expert: layer 1 expert 3 is not held by this server"), std::string::npos) << msg;

  EXPECT_TRUE(client.drop_expert(0, 0));
  EXPECT_FALSE(client.drop_expert(0, 0));
  std::tie(code, msg) = rpc_error_of([&] { client.compute(call_of(0, {{0, 0, 1}})); });
  EXPECT_EQ(code, static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION)) << msg;
}

TEST(ExpertService, PingReportsTheShapeAndFailsWithoutAServer) {
  auto server = start(3, {}, 16);
  ExpertClient client(server->address(), kSecret);
  const cluster::PingReply p = client.ping();
  EXPECT_EQ(p.layers(), kShape.layers);
  EXPECT_EQ(p.experts(), kShape.experts);
  EXPECT_EQ(p.hidden(), kShape.hidden);
  EXPECT_EQ(p.inter(), kShape.inter);
  EXPECT_EQ(p.units(), 3u);
  EXPECT_EQ(p.max_tokens(), 16u);
  EXPECT_EQ(p.max_message_bytes(), server->max_message_bytes());
  const std::string gone = server->address();
  server.reset();
  ExpertClient nobody(gone, kSecret);
  EXPECT_NE(rpc_error_of([&] { nobody.ping(0.3); }).first, 0);
}

TEST(ExpertService, RefusesAnEmptySecretAndAnAddressInUse) {
  ExpertServerOptions o;
  EXPECT_THROW(ExpertServer(synth_expert_weights(kShape, kHeld, 3), o), Error);
  auto server = start(1);
  o.secret = kSecret;
  o.address = server->address();
  try {
    ExpertServer second(synth_expert_weights(kShape, kHeld, 3), o);
    FAIL() << "a second server bound " << o.address;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on " + o.address), std::string::npos) << e.what();
  }
}

TEST(ExpertWeights, StoreWeightsEqualTheSynthesizedCheckpoint) {
  // `moesim weights synth` layout of this shape -> `moesim pack` -> the store factory: the same bits as
  // synth_expert_weights with the same seed.
  testing::TempDir dir("expert_service");
  std::vector<SynthTensor> tensors;
  for (uint32_t l = 0; l < kShape.layers; ++l)
    for (uint32_t e = 0; e < kShape.experts; ++e)
      for (const char* role : {"gate_proj", "up_proj", "down_proj"})
        tensors.push_back({"model.layers." + std::to_string(l) + ".mlp.experts." + std::to_string(e) + "." + role +
                               ".weight",
                           role,
                           std::string(role) == "down_proj" ? std::vector<uint64_t>{kShape.hidden, kShape.inter}
                                                            : std::vector<uint64_t>{kShape.inter, kShape.hidden}});
  SynthOptions so;
  so.seed = 5;
  write_synth_weights(dir.file("w.safetensors"), tensors, so, Json::object());
  const WeightSource src = WeightSource::open(dir.file("w.safetensors"));
  PackOptions po;
  po.codec = "zstd:3";
  write_store(dir.file("w.store"), select_experts(src, false), po);

  const ExpertWeights stored = store_expert_weights(dir.file("w.store"), kShape, kHeld);
  const ExpertWeights synth = synth_expert_weights(kShape, kHeld, 5);
  for (const auto& [l, e] : kHeld) {
    EXPECT_EQ(stored.get(l, e)->gate, synth.get(l, e)->gate);
    EXPECT_EQ(stored.get(l, e)->up, synth.get(l, e)->up);
    EXPECT_EQ(stored.get(l, e)->down, synth.get(l, e)->down);
  }
  EXPECT_EQ(stored.held(), kHeld);

  const ModelShape wider{kShape.layers, kShape.experts, kShape.hidden, kShape.inter * 2};
  try {
    store_expert_weights(dir.file("w.store"), wider, kHeld);
    FAIL() << "a store of another shape was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 0 expert 0 tensor gate_proj: shape [96, 64], the model's is [192, 64]"),
              std::string::npos)
        << e.what();
  }
}

TEST(RpcLimits, ValidateNamesEachField) {
  cluster::ComputeRequest req;
  req.set_layer(2);
  EXPECT_EQ(validate(req, kShape, 1, 8).error_message(), "layer: 2 >= 2 layers");
  req.set_layer(0);
  EXPECT_EQ(validate(req, kShape, 1, 8).error_message(), "work: no work");
  auto* w = req.add_work();
  w->set_tokens(0);
  EXPECT_EQ(validate(req, kShape, 1, 8).error_message(), "work[0].tokens: 0 (must be > 0)");
  w->set_tokens(1);
  req.set_activations(std::string(kShape.hidden * 4, '\0'));
  EXPECT_TRUE(validate(req, kShape, 1, 8).ok());
  EXPECT_EQ(validate(req, kShape, 1, 8, [](uint32_t, uint32_t) { return false; }).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  cluster::LoadRequest load;
  load.set_expert(4);
  EXPECT_EQ(validate(load, kShape).error_message(), "expert: 4 >= 4 experts");
  load.set_expert(3);
  EXPECT_EQ(validate(load, kShape).error_message(), "gate: 0 bytes, expected 12288 (6144 BF16 values)");
}

TEST(RpcLimits, SecretComparison) {
  EXPECT_TRUE(secret_equal("abc", "abc"));
  EXPECT_FALSE(secret_equal("abd", "abc"));
  EXPECT_FALSE(secret_equal("ab", "abc"));
  EXPECT_FALSE(secret_equal("abcd", "abc"));
  EXPECT_FALSE(secret_equal("", ""));  // no secret admits nobody
}

TEST(RpcLimits, MessageBoundCoversALegalRequestAndRefusesHugeShapes) {
  const uint64_t bound = max_message_bytes(kShape, 8);
  EXPECT_GE(bound, 8ull * kShape.hidden * 4 + kShape.expert_bytes());
  EXPECT_THROW(max_message_bytes({1, 1, 1u << 16, 1u << 16}, 1), Error);
}

}  // namespace
}  // namespace moesim::exec
