#include "sim/network.h"

#include <algorithm>
#include <cmath>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <limits>

#include "base/error.h"

namespace moesim::sim {
namespace {

// Lexicographic route length: total latency, then hops.
struct RouteLength {
  double latency = 0;
  uint32_t hops = 0;
};
struct ShorterRoute {
  bool operator()(const RouteLength& a, const RouteLength& b) const {
    return a.latency < b.latency || (a.latency == b.latency && a.hops < b.hops);
  }
};
struct AddRoutes {
  RouteLength operator()(const RouteLength& a, const RouteLength& b) const {
    return {a.latency + b.latency, a.hops + b.hops};
  }
};

struct EdgeProps {
  RouteLength length;
  uint32_t link = 0;  // index into the topology
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, EdgeProps>;

}  // namespace

Network::Network(std::vector<std::string> names, const std::vector<ClusterLinkSpec>& links,
                 std::vector<double> nic_bandwidth)
    : names_(std::move(names)), nic_bw_(std::move(nic_bandwidth)) {
  const uint32_t n = servers();
  if (!nic_bw_.empty() && nic_bw_.size() != n) throw Error("network: an interface bandwidth per server is needed");
  for (double bw : nic_bw_)
    if (!(bw >= 0) || !std::isfinite(bw)) throw Error("network: an interface bandwidth must be finite and >= 0");
  nic_out_.resize(n);
  nic_in_.resize(n);
  Graph g(n);
  for (size_t i = 0; i < links.size(); ++i) {
    const ClusterLinkSpec& l = links[i];
    if (l.a >= n || l.b >= n || l.a == l.b) throw Error("network: link " + std::to_string(i) + " is malformed");
    boost::add_edge(l.a, l.b, EdgeProps{{l.params.latency, 1}, static_cast<uint32_t>(i)}, g);
    links_.push_back({l.a, l.b, l.params, {}});
    links_.push_back({l.b, l.a, l.params, {}});
  }
  routes_.assign(static_cast<size_t>(n) * n, {});
  const RouteLength inf{std::numeric_limits<double>::infinity(), std::numeric_limits<uint32_t>::max()};
  std::vector<RouteLength> dist(n);
  std::vector<Graph::vertex_descriptor> pred(n);
  for (uint32_t src = 0; src < n; ++src) {
    boost::dijkstra_shortest_paths(
        g, src,
        boost::weight_map(boost::get(&EdgeProps::length, g))
            .distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
            .predecessor_map(boost::make_iterator_property_map(pred.begin(), boost::get(boost::vertex_index, g)))
            .distance_compare(ShorterRoute{})
            .distance_combine(AddRoutes{})
            .distance_inf(inf)
            .distance_zero(RouteLength{}));
    std::string unreachable;
    for (uint32_t dst = 0; dst < n; ++dst) {
      if (dst == src) continue;
      if (pred[dst] == dst) {
        unreachable += (unreachable.empty() ? "\"" : ", \"") + names_[dst] + "\"";
        continue;
      }
      std::vector<uint32_t>& hops = routes_[src * n + dst];
      for (auto v = static_cast<uint32_t>(dst); v != src;) {
        const auto u = static_cast<uint32_t>(pred[v]);
        const uint32_t link = g[boost::edge(u, v, g).first].link;
        hops.push_back(2 * link + (links[link].a == u ? 0 : 1));
        v = u;
      }
      std::reverse(hops.begin(), hops.end());
    }
    if (!unreachable.empty())
      throw Error("network: the links do not connect every server: \"" + names_[src] + "\" cannot reach " +
                  unreachable);
  }
  route_latency_.assign(static_cast<size_t>(n) * n, 0);
  route_inv_bw_.assign(static_cast<size_t>(n) * n, 0);
  for (size_t r = 0; r < routes_.size(); ++r)
    for (uint32_t l : routes_[r]) {
      route_latency_[r] += links_[l].params.latency;
      route_inv_bw_[r] += hop_inverse_bandwidth(l);
    }
}

double Network::hop_inverse_bandwidth(uint32_t link) const {
  const DirectedLink& l = links_[link];
  double inv = 1 / l.params.bandwidth;
  if (nic_bandwidth(l.from) > 0) inv += 1 / nic_bandwidth(l.from);
  if (nic_bandwidth(l.to) > 0) inv += 1 / nic_bandwidth(l.to);
  return inv;
}

double Network::idle_transfer_s(uint32_t from, uint32_t to, uint64_t bytes) const {
  double t = 0;
  for (uint32_t l : route(from, to))
    t += links_[l].params.latency + static_cast<double>(bytes) * hop_inverse_bandwidth(l);
  return t;
}

double Network::send_hop(uint32_t link, double ready, uint64_t bytes) {
  DirectedLink& l = links_[link];
  const double b = static_cast<double>(bytes);
  // Without interface queues the hop is the link alone (and its result the same bits as before they existed).
  if (nic_bandwidth(l.from) > 0) ready = nic_out_[l.from].submit(ready, b / nic_bw_[l.from], bytes);
  double arrive = l.fifo.submit(ready, b / l.params.bandwidth, bytes) + l.params.latency;
  if (nic_bandwidth(l.to) > 0) arrive = nic_in_[l.to].submit(arrive, b / nic_bw_[l.to], bytes);
  return arrive;
}

double Network::send(uint32_t from, uint32_t to, double ready, uint64_t bytes) {
  for (uint32_t l : route(from, to)) ready = send_hop(l, ready, bytes);
  return ready;
}

}  // namespace moesim::sim
