// `moesim cluster --platform exec` (docs/cluster-exec.md): the cluster system of the simulator (the
// registry's prism) on real server processes, through exec/exec_cluster_platform.h.
//
//   launch netns  (default) the servers run here, each `moesim cluster-server` in its own network namespace
//                 joined by veth pairs that tc shapes to each link's bandwidth (and latency, with netem; else
//                 the servers wait it in user space), pinned to CPUs of their own while there are enough
//                 (exec/net_emulation.h). Needs root; everything is torn down on exit, on SIGINT/SIGTERM and
//                 when a server dies.
//   launch none   the servers were started elsewhere -- `srun -n N moesim cluster-server SERVERS.json
//                 --rendezvous DIR`, one task per server, or any launcher on hosts of their own -- and
//                 publish their addresses in the shared folder DIR, where the secret file is too.
//
// The coordinator (this process) runs the system; each op is a call to the server that runs it, over the
// control links (unshaped), while activations and migrated weights cross the emulated network between the
// servers. At the end it shuts the servers down.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "exec/exec_cluster_platform.h"
#include "serving/cluster_serving.h"

namespace moesim::harness {

struct RealClusterArgs {
  std::string launch = "netns";  // netns | none
  std::string rendezvous;        // netns: a new temporary folder when empty (removed after); none: required
  std::string secret_file;       // none: default DIR/secret
  std::string moesim = "/proc/self/exe";  // the binary the servers run
  double ready_timeout_s = 120;
  uint64_t weight_seed = 1;
  uint32_t max_tokens = 4096;
  std::string store;  // the servers hold the experts of this store (`moesim pack`); empty: synthetic weights
  // Called once the servers answer, before the system serves (calibration calls); `serve` false: only that.
  std::function<void(const std::vector<std::shared_ptr<exec::ServerCalls>>& calls)> before_serving;
  bool serve = true;
  // The profiles the coordinator estimates with ([server]; empty: the spec's), e.g. calibrated ones.
  std::vector<HardwareProfile> hw;
};

struct RealClusterRun {
  serving::ClusterResult result;
  std::vector<exec::ExecCallRecord> records;
  // {"kind": "exec", "launch", "network" (netns: exec/net_emulation.h's describe()), "cpus" ([server] CPU
  // ids),
  //  "cores_shared" (fewer cores than servers: they share, and the run says so), "rendezvous"}
  Json platform;
};

// Throws moesim::Error when the servers cannot be started (no root for namespaces: the message says what is
// needed and that --launch none runs without), one dies, or a call fails; moesim::UsageError for a bad
// launch.
RealClusterRun run_real_cluster(const std::string& spec_path, const serving::ClusterInput& in,
                                serving::ClusterOptions opt, const RealClusterArgs& a);

}  // namespace moesim::harness
