// The cluster's network in simulated time (docs/cluster.md): every message follows its shortest route
// (core/cluster_routes.h: by total latency, then fewest hops, then Dijkstra's order over the sorted links; a
// topology that leaves some server unreachable is a moesim::Error naming the servers that cannot reach each
// other).
//
// Links: each direction of a link is a FIFO resource of its own (full duplex). A message of b bytes holds
// the direction for b / bandwidth (serialization) after the messages before it, then arrives `latency`
// later (propagation, shared by nothing); alone it takes latency + b / bandwidth. A route of several hops
// is store-and-forward: each hop starts when the message has fully arrived at its near end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_routes.h"
#include "core/cluster_spec.h"

namespace moesim::sim {

// A single-unit FIFO resource whose jobs are submitted in non-decreasing time order (the caller submits at
// the event clock's now(), or later for reservations): each job's end is then known when it is submitted,
// and no completion event is needed.
struct FifoUnit {
  double free_at = 0;  // when the last job submitted ends
  double busy_s = 0;
  uint64_t jobs = 0;
  uint64_t bytes = 0;
  // Starts a job of `seconds` no earlier than `ready` behind the jobs before it; returns its end.
  double submit(double ready, double seconds, uint64_t job_bytes = 0) {
    const double start = ready > free_at ? ready : free_at;
    free_at = start + seconds;
    busy_s += seconds;
    ++jobs;
    bytes += job_bytes;
    return free_at;
  }
};

struct DirectedLink {
  uint32_t from = 0, to = 0;
  LinkParams params;
  FifoUnit fifo;
};

class Network {
 public:
  // `names`: the servers, for messages. Throws moesim::Error when a link names a server out of range or
  // the topology does not connect every server.
  // `nic_bandwidth[n]` > 0 makes server n's network interface a queue of its own, one FIFO per direction that
  // every message leaving (entering) n holds for bytes / bandwidth before (after) the link: several links of
  // one server then share its interface, as a tc-limited interface shares them. Empty or 0: no such queue.
  Network(std::vector<std::string> names, const std::vector<ClusterLinkSpec>& links,
          std::vector<double> nic_bandwidth = {});

  uint32_t servers() const { return static_cast<uint32_t>(names_.size()); }
  const std::string& name(uint32_t server) const { return names_[server]; }
  // Directed links: 2i is topology link i from a to b, 2i + 1 from b to a.
  const std::vector<DirectedLink>& links() const { return links_; }

  // The directed links from `from` to `to`, in order (empty when from == to).
  const std::vector<uint32_t>& route(uint32_t from, uint32_t to) const { return routes_.route(from, to); }
  // The route from `from` to `to` on idle links: its hops' latencies summed, and their seconds per byte
  // summed (each hop_inverse_bandwidth), in route order; 0 from a server to itself.
  double route_latency(uint32_t from, uint32_t to) const { return routes_.route_latency(from, to); }
  double route_inverse_bandwidth(uint32_t from, uint32_t to) const {
    return route_inv_bw_.empty() ? routes_.route_inverse_bandwidth(from, to)
                                 : route_inv_bw_[from * servers() + to];
  }
  // Seconds `bytes` take from `from` to `to` on idle links (the sum of the hops' latency + bytes/bandwidth).
  double idle_transfer_s(uint32_t from, uint32_t to, uint64_t bytes) const;

  // Sends `bytes` over directed link `link`, ready at `ready`: through the sender's interface, the link and
  // the receiver's interface; returns when it has arrived at the far end.
  double send_hop(uint32_t link, double ready, uint64_t bytes);
  // Seconds per byte of a hop on idle resources: the link's and both interfaces' (no latency).
  double hop_inverse_bandwidth(uint32_t link) const;
  double nic_bandwidth(uint32_t server) const { return nic_bw_.empty() ? 0 : nic_bw_[server]; }
  bool has_nic_queues() const { return !nic_bw_.empty(); }
  const FifoUnit& nic_out(uint32_t server) const { return nic_out_[server]; }
  const FifoUnit& nic_in(uint32_t server) const { return nic_in_[server]; }
  // The whole route, hop after hop from `ready` (a reservation: every hop is queued now, in order).
  double send(uint32_t from, uint32_t to, double ready, uint64_t bytes);

 private:
  std::vector<std::string> names_;
  std::vector<double> nic_bw_;  // [server]; empty: no interface queues
  ClusterRoutes routes_;
  std::vector<DirectedLink> links_;
  std::vector<double> route_inv_bw_;  // [from * N + to] with the interfaces; empty without interface queues
  std::vector<FifoUnit> nic_out_, nic_in_;  // [server]
};

}  // namespace moesim::sim
