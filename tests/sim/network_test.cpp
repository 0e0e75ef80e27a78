// The cluster network (sim/network.h) on small topologies worked by hand: messages along the shortest routes
// (whose choice core/cluster_routes.h's test pins), each link direction as its own FIFO, interface queues,
// and the idle route costs the systems price with, the routes' own without interfaces.
#include "sim/network.h"

#include <gtest/gtest.h>

#include "tests/error_of.h"

namespace moesim::sim {
namespace {

using test::error_of;

ClusterLinkSpec link(uint32_t a, uint32_t b, double mbit, double latency_s) {
  return {a, b, {mbit * 1e6 / 8, latency_s}};
}

TEST(Network, LineTopologyRoutesThroughTheMiddle) {
  // a - b - c: a reaches c only through b, hop after hop.
  const Network net({"a", "b", "c"}, {link(0, 1, 100, 1e-3), link(1, 2, 1000, 2e-3)});
  EXPECT_EQ(net.route(0, 2), (std::vector<uint32_t>{0, 2}));  // a->b, b->c
  EXPECT_EQ(net.route(2, 0), (std::vector<uint32_t>{3, 1}));  // c->b, b->a
  EXPECT_TRUE(net.route(1, 1).empty());
  const uint64_t bytes = 125'000;  // 10 ms at 100 Mbit/s, 1 ms at 1000 Mbit/s
  EXPECT_NEAR(net.idle_transfer_s(0, 2, bytes), (1e-3 + 0.01) + (2e-3 + 0.001), 1e-15);
}

TEST(Network, DisconnectedNamesTheServers) {
  const std::string e = error_of([] {
    Network({"a", "b", "c", "d"}, {link(0, 1, 100, 1e-3), link(2, 3, 100, 1e-3)});
  });
  EXPECT_NE(e.find("\"a\" cannot reach \"c\", \"d\""), std::string::npos) << e;
}

// The idle route costs: without interface queues the routes' own sums (the real cluster's platform prices
// with core/cluster_routes.h alone: the same bits); with them each hop adds both ends' 1 / interface
// bandwidth.
TEST(Network, IdleRouteCostsCountTheInterfaces) {
  const std::vector<ClusterLinkSpec> links{link(0, 1, 8, 0.5), link(1, 2, 80, 0.25)};  // 1 MB/s, 10 MB/s
  const ClusterRoutes routes({"a", "b", "c"}, links);
  const Network plain({"a", "b", "c"}, links);
  const Network nic({"a", "b", "c"}, links, {2e6, 4e6, 0});
  for (uint32_t from = 0; from < 3; ++from)
    for (uint32_t to = 0; to < 3; ++to) {
      EXPECT_EQ(plain.route_latency(from, to), routes.route_latency(from, to));
      EXPECT_EQ(plain.route_inverse_bandwidth(from, to), routes.route_inverse_bandwidth(from, to));
      EXPECT_EQ(nic.route_latency(from, to), routes.route_latency(from, to));
    }
  EXPECT_DOUBLE_EQ(plain.route_inverse_bandwidth(0, 2), 1 / 1e6 + 1 / 10e6);
  // a -> b: a's 2 MB/s and b's 4 MB/s; b -> c: b's 4 MB/s (c has no queue).
  EXPECT_DOUBLE_EQ(nic.route_inverse_bandwidth(0, 2), (1 / 1e6 + 1 / 2e6 + 1 / 4e6) + (1 / 10e6 + 1 / 4e6));
}

TEST(Network, EachDirectionIsAFifo) {
  Network net({"a", "b"}, {link(0, 1, 8, 0.5)});  // 1 MB/s, 0.5 s
  // Two messages of 1 MB at t = 0 from a: the second waits for the first's serialization.
  EXPECT_DOUBLE_EQ(net.send(0, 1, 0, 1'000'000), 1.5);
  EXPECT_DOUBLE_EQ(net.send(0, 1, 0, 1'000'000), 2.5);
  // The other direction is free.
  EXPECT_DOUBLE_EQ(net.send(1, 0, 0, 1'000'000), 1.5);
  EXPECT_EQ(net.links()[0].fifo.bytes, 2'000'000u);
  EXPECT_EQ(net.links()[1].fifo.jobs, 1u);
}

// An interface queue (a server's `nic`) is shared by all of the server's links: two messages from a to b and
// to c leave a's interface one after the other, then each crosses its own link, then the receiver's
// interface. By hand with 1 MB messages, a's interface at 2 MB/s (0.5 s each), links at 1 MB/s with 0.5 s
// latency, b's interface at 4 MB/s (0.25 s), c without one: to b 0.5 + 1 + 0.5 + 0.25 = 2.25 s; to c 1.0
// (behind the first) + 1 + 0.5 = 2.5 s.
TEST(Network, AnInterfaceIsSharedByTheServersLinks) {
  Network net({"a", "b", "c"}, {link(0, 1, 8, 0.5), link(0, 2, 8, 0.5), link(1, 2, 8, 0.5)}, {2e6, 4e6, 0});
  EXPECT_DOUBLE_EQ(net.send(0, 1, 0, 1'000'000), 2.25);
  EXPECT_DOUBLE_EQ(net.send(0, 2, 0, 1'000'000), 2.5);
  EXPECT_EQ(net.nic_out(0).bytes, 2'000'000u);
  EXPECT_DOUBLE_EQ(net.nic_out(0).busy_s, 1.0);
  EXPECT_EQ(net.nic_in(1).bytes, 1'000'000u);
  EXPECT_EQ(net.nic_in(2).jobs, 0u);  // c has no interface queue
  // Idle estimates count the interfaces: a -> b alone is 0.5 + 1 + 0.5 + 0.25.
  EXPECT_DOUBLE_EQ(net.idle_transfer_s(0, 1, 1'000'000), 2.25);
  // Without interface bandwidths the links alone queue, as before.
  Network plain({"a", "b", "c"}, {link(0, 1, 8, 0.5), link(0, 2, 8, 0.5), link(1, 2, 8, 0.5)});
  EXPECT_DOUBLE_EQ(plain.send(0, 1, 0, 1'000'000), 1.5);
  EXPECT_DOUBLE_EQ(plain.send(0, 2, 0, 1'000'000), 1.5);
}

}  // namespace
}  // namespace moesim::sim
