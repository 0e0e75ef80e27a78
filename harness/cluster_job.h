// `moesim cluster`: Prism's edge cluster (Accelerating Edge Inference for Distributed MoE Models with
// Latency-Optimized Expert Placement) in simulated time.
//   moesim cluster SERVERS.json --placement P [--migrate-every 5m] [--duration 30m] [--seed N]
//                  [--profile-tokens K] [--draw round-robin|random] [--bucket 1m] [--json] [-o F]
//                  [--timeline F [--timeline-window A:B]]
// The engine is sim/cluster_sim.h; SERVERS.json is core/cluster_spec.h; docs/cluster.md has both and the keys.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct ClusterArgs {
  std::string spec, placement, migrate_every, duration = "30m", bucket = "1m", draw = "round-robin", out = "-",
                                               timeline, timeline_window;
  uint64_t seed = 1, profile_tokens = 1000;
  bool json = false;
};

// Loads SERVERS.json, places the experts, simulates the cluster and writes the summary (text or JSON) to a.out.
void run_cluster_job(const ClusterArgs& a);
// What run_cluster_job writes (the summary, or the JSON text when a.json); the timeline file is written here.
std::string cluster_output(const ClusterArgs& a);

}  // namespace moesim::harness
