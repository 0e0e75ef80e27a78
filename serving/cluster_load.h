// Is the cluster keeping up? The load analysis of a cluster run (`moesim cluster`, `validate --cluster`),
// from its requests alone (arrival, first token, end). A server's requests start as they arrive and share its
// GPUs and links, so an arrival rate beyond what it serves shows as requests piling up: latency that grows
// over the run instead of settling, and the mean latency of such a run is no steady-state figure.
//
// Per server and for the whole cluster:
//   arrival_rate        requests / the span of their arrivals
//   throughput          requests (and tokens) ended / the span from the first arrival to the last end
//   service_s           the per-request service time unloaded: the median latency of the requests that
//   arrived
//                       to an idle server (none of its requests in flight); the smallest latency when none
//                       did
//   utilisation         arrival_rate / throughput: about 1 while the server keeps up (it then says nothing of
//                       how close to capacity it runs), lambda / mu once it saturates (the run, its drain
//                       included, ends requests at its capacity). Requests overlap on a server's GPUs, so
//                       arrival_rate x service_s is no load figure here
//   latency growth      the mean latency of the last third of arrivals over the first third's, and the
//                       least-squares slope of latency against arrival time (s of latency per s of run); the
//                       trend is that slope x the arrivals' span over the mean latency
//   backlog             requests in flight when the last request arrived
//   overloaded          backlog >= max(25, 5% of the requests) and trend >= 0.75: requests pile up and the
//                       latency the trend line adds over the run is most of the mean. On simulated M/M/1
//                       queues of 300 requests it fired for 1 of 300 seeds at load 0.8 (0 of 300 at 100 or
//                       1000 requests), 17 of 300 at 0.9, and 295 of 300 at 1.3 (all at 1000 requests);
//                       tests/serving/cluster_load_test pins 50 seeds of each side.
// The steady-state figures a verdict on an overloaded run should use are throughput and service_s (the mean
// latency grows with the run's length).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "serving/cluster_serving.h"

namespace moesim::serving {

struct LoadStats {
  uint64_t requests = 0, tokens = 0;
  double arrival_rate = 0;                         // requests/s
  double throughput_rps = 0;                       // requests ended per second
  double throughput_tps = 0;                       // tokens per second
  double service_s = 0;                            // unloaded service time
  uint64_t idle_arrivals = 0;                      // requests service_s is the median of
  double utilisation = 0;                          // arrival_rate / throughput_rps
  double trend = 0;                                // slope x the arrivals' span / the mean latency
  double latency_first_s = 0, latency_last_s = 0;  // mean latency of the first and last thirds of arrivals
  double growth = 1;                               // latency_last_s / latency_first_s
  double slope = 0;                                // s of latency per s of arrival time
  uint64_t backlog = 0;                            // in flight at the last arrival
  bool overloaded = false;
};

// `server` selects one server's requests; UINT32_MAX all of them (the cluster).
LoadStats load_stats(const ClusterResult& r, uint32_t server);
// {"overall": ..., "per_server": {name: ...}}, each LoadStats as JSON.
Json load_json(const ClusterInput& in, const ClusterResult& r);
// One warning per overloaded server (and the cluster when it is), naming the figures; empty when none.
std::vector<std::string> overload_warnings(const ClusterInput& in, const ClusterResult& r);

}  // namespace moesim::serving
