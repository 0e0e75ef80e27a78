// A server's control side (exec/cluster_control.h) with two servers in this process on 127.0.0.1: the dense
// part runs on a unit, an invocation ships activations to the peer whose units compute them (and one of the
// server's own experts runs locally), a push installs the server's weights of an expert at the peer, and the
// coordinator's calls are admitted by the secret and bounded.
#include "exec/cluster_control.h"

#include <gtest/gtest.h>

#include <atomic>

#include "base/error.h"
#include "exec/rpc_limits.h"

namespace moesim::exec {
namespace {

const ModelShape kShape{2, 4, 8, 6};

std::vector<ExpertKey> all_experts() {
  std::vector<ExpertKey> keys;
  for (uint32_t l = 0; l < kShape.layers; ++l)
    for (uint32_t e = 0; e < kShape.experts; ++e) keys.emplace_back(l, e);
  return keys;
}

struct Pair {
  std::unique_ptr<ExpertServer> experts[2];
  std::unique_ptr<ClusterControl> control[2];
  std::atomic<int> shutdowns{0};

  Pair() {
    for (uint32_t s = 0; s < 2; ++s) {
      ExpertServerOptions o;
      o.secret = "s3cret";
      o.units = 2;
      o.max_tokens = 64;
      // Different weights per server: a push's effect shows in the peer's results.
      experts[s] = std::make_unique<ExpertServer>(synth_expert_weights(kShape, all_experts(), 10 + s), o);
    }
    for (uint32_t s = 0; s < 2; ++s) {
      ClusterControlOptions c;
      c.secret = "s3cret";
      c.self = s;
      c.peers = {experts[0]->address(), experts[1]->address()};
      c.dense_rows = kShape.hidden;
      c.dense_cols = 2 * kShape.hidden;
      c.max_tokens = 64;
      c.on_shutdown = [this] { ++shutdowns; };
      control[s] = std::make_unique<ClusterControl>(*experts[s], c);
    }
  }
};

TEST(ClusterControl, DenseRunsOnAUnit) {
  Pair p;
  ClusterControlClient a(p.control[0]->address(), "s3cret");
  const CallTiming t = a.dense(1, 0, 4);
  EXPECT_LE(t.received, t.start);
  EXPECT_LE(t.start, t.end);
  EXPECT_LE(t.end, t.replied);
}

TEST(ClusterControl, InvocationsComputeAtThePeerAndLocally) {
  Pair p;
  ClusterControlClient a(p.control[0]->address(), "s3cret");
  const CallTiming remote = a.invoke(1, 1, {{2, 0, 3}, {3, 1, 1}});
  ASSERT_EQ(remote.works.size(), 2u);
  for (const auto& [start, end] : remote.works) {
    EXPECT_LE(remote.peer_arrived, start);
    EXPECT_LE(start, end);
    EXPECT_LE(end, remote.peer_sent);
  }
  EXPECT_LE(remote.start, remote.peer_arrived);
  EXPECT_LE(remote.peer_sent, remote.end);
  const CallTiming local = a.invoke(0, 1, {{2, 1, 2}});
  ASSERT_EQ(local.works.size(), 1u);
  EXPECT_EQ(local.peer_arrived, 0);  // no peer
}

TEST(ClusterControl, PushInstallsTheServersWeightsAtThePeer) {
  Pair p;
  ASSERT_NE(p.experts[0]->weights().get(1, 2)->gate, p.experts[1]->weights().get(1, 2)->gate)
      << "seeds 10, 11";
  ClusterControlClient a(p.control[0]->address(), "s3cret");
  a.push(1, 1, 2);
  EXPECT_EQ(p.experts[1]->weights().get(1, 2)->gate, p.experts[0]->weights().get(1, 2)->gate);
  EXPECT_EQ(p.experts[1]->weights().get(1, 2)->down, p.experts[0]->weights().get(1, 2)->down);
}

TEST(ClusterControl, RefusesWrongSecretsAndOutOfBoundCalls) {
  Pair p;
  ClusterControlClient wrong(p.control[0]->address(), "other");
  try {
    wrong.dense(0, 0, 1);
    ADD_FAILURE() << "a wrong secret was admitted";
  } catch (const RpcError& e) {
    EXPECT_NE(std::string(e.what()).find("UNAUTHENTICATED"), std::string::npos) << e.what();
  }
  ClusterControlClient a(p.control[0]->address(), "s3cret");
  auto message_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const RpcError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message_of([&] { a.dense(0, 0, 65); }).find("tokens: 65 not in [1, 64]"), std::string::npos);
  EXPECT_NE(message_of([&] { a.dense(2, 0, 1); }).find("unit: 2 >= 2 units"), std::string::npos);
  EXPECT_NE(message_of([&] { a.invoke(2, 0, {{0, 0, 1}}); }).find("peer: 2 >= 2 servers"), std::string::npos);
  EXPECT_NE(message_of([&] {
              a.invoke(1, 0, {{4, 0, 1}});
            }).find("work[0].expert: 4 >= 4 experts"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              a.invoke(1, 0, {{0, 0, 40}, {1, 0, 40}});
            }).find("add up to 80 > 64"),
            std::string::npos);
  EXPECT_NE(message_of([&] { a.push(1, 2, 0); }).find("layer: 2 >= 2 layers"), std::string::npos);
}

TEST(ClusterControl, ShutdownTellsTheProcess) {
  Pair p;
  ClusterControlClient a(p.control[1]->address(), "s3cret");
  a.shutdown_server();
  EXPECT_EQ(p.shutdowns.load(), 1);
}

}  // namespace
}  // namespace moesim::exec
