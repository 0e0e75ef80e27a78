// The routes of a cluster's network (docs/cluster.md): servers are the vertices of a Boost.Graph, the
// undirected links of ClusterSpec::topology() its edges, and every message follows a shortest route.
//
// Routes: by total latency; among routes of equal latency the one with fewest hops, and among those the one
// Dijkstra settles first in the topology's (sorted) link order -- a pure function of the spec, so a seed
// gives one result. A topology that leaves some server unreachable is a moesim::Error naming the servers
// that cannot reach each other.
//
// A route is the list of directed links it takes: 2i is topology link i from a to b, 2i + 1 from b to a.
// What a route costs on idle links (latency summed; seconds per byte summed, 1 / bandwidth per hop) is here
// too. In core/ because both platforms price their choices with the same routes: the simulated network
// (sim/network.h) sends messages along them, and the real cluster (exec/exec_cluster_platform.h) answers the
// system's route questions from them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.h"

namespace moesim {

class ClusterRoutes {
 public:
  // `names`: the servers, for messages. Throws moesim::Error when a link names a server out of range or the
  // topology does not connect every server.
  ClusterRoutes(const std::vector<std::string>& names, const std::vector<ClusterLinkSpec>& links);

  uint32_t servers() const { return n_; }
  // The directed links from `from` to `to`, in order (empty when from == to).
  const std::vector<uint32_t>& route(uint32_t from, uint32_t to) const { return routes_[from * n_ + to]; }
  // The route on idle links: its hops' latencies summed, and their 1 / bandwidth summed, in route order; 0
  // from a server to itself.
  double route_latency(uint32_t from, uint32_t to) const { return latency_[from * n_ + to]; }
  double route_inverse_bandwidth(uint32_t from, uint32_t to) const { return inv_bw_[from * n_ + to]; }

 private:
  uint32_t n_ = 0;
  std::vector<std::vector<uint32_t>> routes_;  // [from * N + to]
  std::vector<double> latency_, inv_bw_;       // [from * N + to]
};

}  // namespace moesim
