// `moesim cluster`: Prism's edge cluster (Accelerating Edge Inference for Distributed MoE Models with
// Latency-Optimized Expert Placement) in simulated time.
//   moesim cluster SERVERS.json --placement P [--migrate-every 5m] [--duration 30m] [--seed N]
//                  [--platform sim|exec [--launch netns|none] [--rendezvous DIR] [--secret-file F]]
//                  [--profile-tokens K] [--draw round-robin|random] [--bucket 1m] [--json] [-o F]
//                  [--timeline F [--timeline-window A:B]]
// The system is serving/cluster_serving.h's (the registry's prism), on sim/sim_cluster_platform.h;
// SERVERS.json is core/cluster_spec.h; docs/cluster.md has them and the keys.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "base/output_guard.h"
#include "core/cluster_spec.h"
#include "serving/cluster_serving.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct ClusterArgs {
  PolicySpec system{"prism", {}};  // the cluster system, parsed where it is read (--system)
  std::string spec, placement, migrate_every, duration, bucket = "1m", draw = "round-robin", out = "-",
                                                        timeline, timeline_window;
  std::string plot;  // --plot FILE: latency and local compute ratio over time (scripts/plot_cluster.py)
  // sim, or exec: real server processes (harness/cluster/real_cluster.h), launched as `launch` says.
  std::string platform = "sim", launch = "netns", rendezvous, secret_file;
  uint64_t seed = 1, profile_tokens = 1000;
  bool json = false;
};

// The cluster system (options.system) on a simulated cluster: the result with the platform's links,
// interfaces, event count and timeline added.
serving::ClusterResult simulate_cluster(const serving::ClusterInput& in, const serving::ClusterOptions& opt);

// Refuses (moesim::UsageError) outputs that are one of the files the spec reads (core/cluster_spec.h's
// files_named): the io guard of the command line sees the spec, not what it names.
void refuse_outputs_over_spec_files(const ClusterSpec& spec, const std::vector<NamedPath>& outputs);
// Arrival times at or after the duration never arrive: a warning per server saying how many, so a run that
// serves fewer requests than its timestamps file lists does not look complete (cluster, validate --cluster).
void warn_arrivals_after_duration(const ClusterSpec& spec, double duration_s,
                                  const std::string& duration_text);

// Loads SERVERS.json, places the experts and serves the cluster (simulated, or for real with --platform
// exec): the summary, or the JSON text when a.json, which cli/ writes to a.out; the timeline and CSV files
// the options name are written here.
std::string cluster_output(const ClusterArgs& a);

}  // namespace moesim::harness
