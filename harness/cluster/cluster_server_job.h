// `moesim cluster-server`: one server process of a real cluster (docs/cluster-exec.md), started by
// `moesim cluster --platform exec` inside the server's network namespace, or by Slurm (`srun`, one task per
// server) or any launcher on hosts of their own.
//   moesim cluster-server SERVERS.json [--server NAME | --rank N] --rendezvous DIR [--secret-file F]
//                         [--listen HOST:PORT] [--control HOST:PORT] [--emulate-latency] [--seed S]
//                         [--max-tokens K] [--ready-timeout 2m] [--store S]
// It holds every expert of the model's shapes as real BF16 weights (those of --store, a `moesim pack` store
// of the model, or seeded synthetic ones: the run's placement decides where an expert computes, and a
// migration ships its weights as a real copy), serves them on --listen (ExpertService: its peers' remote
// invocations), publishes that address in DIR, waits for its peers' (harness/cluster/cluster_rendezvous.h),
// then serves the coordinator on --control (ClusterControl) and publishes it, until the coordinator's
// Shutdown.
// --rank defaults to $SLURM_PROCID; the secret is
// --secret-file's, else $MOESIM_CLUSTER_SECRET's (how `cluster --platform exec` passes it), else
// DIR/secret's.
#pragma once

#include <cstdint>
#include <string>

namespace moesim::harness {

struct ClusterServerArgs {
  std::string spec, server, rendezvous, secret_file, listen = "127.0.0.1:0", control, ready_timeout = "2m",
                                                     store;
  int64_t rank = -1;  // < 0: --server, or $SLURM_PROCID
  bool emulate_latency = false;
  uint64_t seed = 1;
  uint32_t max_tokens = 4096;
};

// Runs the server until the coordinator shuts it down. moesim::UsageError for a bad option (no such server,
// no rank); moesim::Error when it cannot listen, a peer never publishes, or the secret file is unsafe.
void run_cluster_server(const ClusterServerArgs& a);

}  // namespace moesim::harness
