// The cluster's shortest routes (core/cluster_routes.h), on small topologies worked by hand: the hops of a
// route, ties by hop count, a disconnected or malformed topology, and what a route costs on idle links.
#include "core/cluster_routes.h"

#include <gtest/gtest.h>

#include "tests/error_of.h"

namespace moesim {
namespace {

using test::error_of;

ClusterLinkSpec link(uint32_t a, uint32_t b, double mbit, double latency_s) {
  return {a, b, {mbit * 1e6 / 8, latency_s}};
}

TEST(ClusterRoutes, LineTopologyRoutesThroughTheMiddle) {
  // a - b - c: a reaches c only through b; 2i is link i from a to b, 2i + 1 back.
  const ClusterRoutes r({"a", "b", "c"}, {link(0, 1, 100, 1e-3), link(1, 2, 1000, 2e-3)});
  EXPECT_EQ(r.servers(), 3u);
  EXPECT_EQ(r.route(0, 2), (std::vector<uint32_t>{0, 2}));  // a->b, b->c
  EXPECT_EQ(r.route(2, 0), (std::vector<uint32_t>{3, 1}));  // c->b, b->a
  EXPECT_TRUE(r.route(1, 1).empty());
  // Idle costs: 1 + 2 ms; 8 / 100e6 + 8 / 1000e6 seconds per byte (12.5 MB/s, then 125 MB/s).
  EXPECT_DOUBLE_EQ(r.route_latency(0, 2), 3e-3);
  EXPECT_DOUBLE_EQ(r.route_inverse_bandwidth(0, 2), 1 / 12.5e6 + 1 / 125e6);
  EXPECT_EQ(r.route_latency(1, 1), 0);
  EXPECT_EQ(r.route_inverse_bandwidth(1, 1), 0);
}

TEST(ClusterRoutes, ShortestByLatencyThenHops) {
  // The direct a-c link is slower (10 ms) than a-b-c (1 + 1 ms).
  const ClusterRoutes slow({"a", "b", "c"},
                           {link(0, 1, 100, 1e-3), link(0, 2, 100, 10e-3), link(1, 2, 100, 1e-3)});
  EXPECT_EQ(slow.route(0, 2), (std::vector<uint32_t>{0, 4}));
  EXPECT_DOUBLE_EQ(slow.route_latency(0, 2), 2e-3);
  // Equal latency (2 ms both ways): the route with fewer hops.
  const ClusterRoutes tie({"a", "b", "c"},
                          {link(0, 1, 100, 1e-3), link(0, 2, 100, 2e-3), link(1, 2, 100, 1e-3)});
  EXPECT_EQ(tie.route(0, 2), (std::vector<uint32_t>{2}));
  EXPECT_EQ(tie.route(2, 0), (std::vector<uint32_t>{3}));
}

TEST(ClusterRoutes, ABadTopologyNamesWhatIsWrong) {
  const std::string e = error_of([] {
    ClusterRoutes({"a", "b", "c", "d"}, {link(0, 1, 100, 1e-3), link(2, 3, 100, 1e-3)});
  });
  EXPECT_NE(e.find("\"a\" cannot reach \"c\", \"d\""), std::string::npos) << e;
  EXPECT_NE(error_of([] {
              ClusterRoutes({"a", "b"}, {link(0, 2, 100, 1e-3)});
            }).find("link 0 is malformed"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              ClusterRoutes({"a", "b"}, {link(0, 1, 100, 1e-3), link(1, 1, 100, 1e-3)});
            }).find("link 1 is malformed"),
            std::string::npos);
}

}  // namespace
}  // namespace moesim
