#include "sim/network.h"

#include <cmath>

#include "base/error.h"

namespace moesim::sim {
namespace {

// The interfaces' bandwidths, checked before the links (a spec with both wrong names the interfaces).
std::vector<double> checked_nics(std::vector<double> nic_bw, size_t servers) {
  if (!nic_bw.empty() && nic_bw.size() != servers)
    throw Error("network: an interface bandwidth per server is needed");
  for (double bw : nic_bw)
    if (!(bw >= 0) || !std::isfinite(bw))
      throw Error("network: an interface bandwidth must be finite and >= 0");
  return nic_bw;
}

}  // namespace

Network::Network(std::vector<std::string> names, const std::vector<ClusterLinkSpec>& links,
                 std::vector<double> nic_bandwidth)
    : names_(std::move(names)),
      nic_bw_(checked_nics(std::move(nic_bandwidth), names_.size())),
      routes_(names_, links) {
  const uint32_t n = servers();
  nic_out_.resize(n);
  nic_in_.resize(n);
  for (const ClusterLinkSpec& l : links) {
    links_.push_back({l.a, l.b, l.params, {}});
    links_.push_back({l.b, l.a, l.params, {}});
  }
  // Without interface queues a hop's seconds per byte are its link's alone: the routes' own sums.
  if (nic_bw_.empty()) return;
  route_inv_bw_.assign(static_cast<size_t>(n) * n, 0);
  for (uint32_t from = 0; from < n; ++from)
    for (uint32_t to = 0; to < n; ++to)
      for (uint32_t l : route(from, to)) route_inv_bw_[from * n + to] += hop_inverse_bandwidth(l);
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
