#include "core/cluster_routes.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <limits>

#include "base/error.h"

namespace moesim {
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
using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, EdgeProps>;

}  // namespace

ClusterRoutes::ClusterRoutes(const std::vector<std::string>& names, const std::vector<ClusterLinkSpec>& links)
    : n_(static_cast<uint32_t>(names.size())) {
  const uint32_t n = n_;
  Graph g(n);
  for (size_t i = 0; i < links.size(); ++i) {
    const ClusterLinkSpec& l = links[i];
    if (l.a >= n || l.b >= n || l.a == l.b)
      throw Error("network: link " + std::to_string(i) + " is malformed");
    boost::add_edge(l.a, l.b, EdgeProps{{l.params.latency, 1}, static_cast<uint32_t>(i)}, g);
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
            .predecessor_map(
                boost::make_iterator_property_map(pred.begin(), boost::get(boost::vertex_index, g)))
            .distance_compare(ShorterRoute{})
            .distance_combine(AddRoutes{})
            .distance_inf(inf)
            .distance_zero(RouteLength{}));
    std::string unreachable;
    for (uint32_t dst = 0; dst < n; ++dst) {
      if (dst == src) continue;
      if (pred[dst] == dst) {
        unreachable += (unreachable.empty() ? "\"" : ", \"") + names[dst] + "\"";
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
      throw Error("network: the links do not connect every server: \"" + names[src] + "\" cannot reach " +
                  unreachable);
  }
  latency_.assign(static_cast<size_t>(n) * n, 0);
  inv_bw_.assign(static_cast<size_t>(n) * n, 0);
  for (size_t r = 0; r < routes_.size(); ++r)
    for (uint32_t l : routes_[r]) {
      const LinkParams& p = links[l / 2].params;
      latency_[r] += p.latency;
      inv_bw_[r] += 1 / p.bandwidth;
    }
}

}  // namespace moesim
