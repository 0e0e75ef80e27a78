// The emulation host's CPU cores as a resource the emulated cluster's servers and its coordinator share, for
// the cost side of `validate --cluster` when the servers run on fewer cores than they are (real_cluster.h's
// "cores_shared"): every unit's work is a CPU thread's, and every call's hand-offs (the coordinator's pool
// thread and gRPC on both sides, the server's wake-ups) spend CPU time too. Processor sharing, fluid: at a
// moment the demand is the units working (one core each) plus, for every call in a hand-off, the calibrated
// CPU time per call over the lone call's overhead (the fraction of a core a hand-off keeps busy); what needs
// a core runs max(1, (demand + its own) / cores) times slower. Only the CPU part of a call's overhead
// stretches; the rest (wake-up and network-stack latency) does not.
//
// The book is kept in the simulator's time by its caller (harness/cluster/call_load.h's CountedCluster and
// sim/sim_cluster_platform.h's hooks): work() and call() price a unit's work and a call's hand-offs at `now`,
// add_*() enter what was priced once its times are known. Deterministic: the same calls give the same times.
#pragma once

#include <cstdint>
#include <vector>

#include "serving/cluster_serving.h"
#include "sim/sim_cluster_platform.h"

namespace moesim::harness {

struct HostCoresParams {
  uint32_t cores = 0;     // the cores the servers share (0: none shared, nothing stretches)
  double call_s = 0;      // the lone call's overhead, before and after its op together (seconds)
  double call_cpu_s = 0;  // the host's CPU time per lone call less the call's work (seconds)
};

class HostCores {
 public:
  explicit HostCores(const HostCoresParams& p);
  // A unit's work the model gives `seconds` to alone, starting at `now`: its time on the shared cores.
  double work(double now, double seconds);
  // A call made at `now`: its overhead before and after its op together.
  double call(double now);
  // What was priced: a hand-off [from, to) (a call's time before or after its op), a unit's work [from, to).
  void add_handoff(double from, double to);
  void add_work(double from, double to);
  // The demand at `t` (cores busy, fractional), for tests and reports.
  double demand(double t) const;

 private:
  double stretch(double now, double own) const;
  struct Busy {
    double from, to, weight;
  };
  void prune(double now);
  HostCoresParams p_;
  double density_ = 0;  // a hand-off's share of a core
  std::vector<Busy> busy_;
};

// serve_cluster on the simulated cluster of `servers` and `links` with `co`'s options, every call's overhead
// and every unit's compute priced by HostCores (co's call overheads and shared_cores are replaced; its
// invocation overhead stays, added to a call's). A migration's load keeps the model's time.
serving::ClusterResult serve_on_host_cores(const serving::ClusterInput& in,
                                           const serving::ClusterOptions& opt,
                                           const std::vector<sim::SimClusterServer>& servers,
                                           sim::SimClusterOptions co, const HostCoresParams& p);

}  // namespace moesim::harness
