// The times a server of the real cluster reports for one call (exec/cluster_control.h), on CLOCK_MONOTONIC:
// one clock for every process of a host, across network namespaces, so that a coordinator on the same host
// places them on its own time line (across hosts, only its own times are comparable).
#pragma once

#include <utility>
#include <vector>

namespace moesim::exec {

struct CallTiming {
  double start = 0, end = 0;  // the work on its unit, or the whole call (invoke, push) as the server saw it
  // Invoke: when the activations reached the peer, its units' work, and when it replied (0: no peer).
  double peer_arrived = 0, peer_sent = 0;
  std::vector<std::pair<double, double>> works;
  // When the server took the call and replied (0: not known): the coordinator's dispatch around the work.
  double received = 0, replied = 0;
};

// CLOCK_MONOTONIC in seconds.
double monotonic_seconds();

}  // namespace moesim::exec
