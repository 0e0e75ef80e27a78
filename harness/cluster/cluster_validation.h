// `moesim validate --cluster SERVERS.json --placement P [--repeat N] [--duration 20s] [--json]`
// (docs/cluster-exec.md, "Validation"): how far the cluster simulator is from real server processes.
//
//   1. calibration   the servers are started once for calibration calls alone, with no trace: each server's
//                    dense and expert work alone on a unit at 1 to 32 tokens (a line fitted per kind: the
//                    fixed cost and the cost per token, as a profile's overheads and FLOP rate), the
//                    coordinator's call round trip around it (call_overhead_s, made through the coordinator's
//                    own platform as a run makes it: harness/cluster/call_overhead_fit.h), and an invocation
//                    between every ordered pair at 1 and 32 tokens, whose time beyond the links' model (the
//                    spec's latency and bandwidth) and the calls' is invoke_overhead_s. Then a short serve
//                    (4 s of arrivals) of other requests than the runs' (each server the next one's traces,
//                    another seed) on the same servers, whose calls' overheads give a line reported beside
//                    the cost (errors.cost_serve). Nothing of the runs below is seen: the profile is fitted
//                    on other work than it is checked on.
//   2. N exec runs   `cluster --platform exec` of the spec, each a fresh set of processes, the coordinator
//                    estimating with the calibrated profiles.
//   3. structure     per run, the simulator fed that run's measured durations: every unit's work, every
//   call's
//                    time before and after it, every invocation's way there and back (with their queueing):
//                    the error of the system's and platform's structure alone.
//   4. cost          the simulator with the calibrated profiles, overheads and the spec's network.
// Errors are signed fractions of the mean request latency, (sim - exec) / exec, one per run; the verdict of a
// target (structure within 3%, cost within 10%) is read over the runs' interval: met when every run's error
// is within it, missed when none is, else inconclusive.
#pragma once

#include <string>

#include "base/json_io.h"

namespace moesim::harness {

struct ClusterValidateArgs {
  std::string spec, placement, duration = "20s", launch = "netns", rendezvous, secret_file, store,
                               migrate_every;
  std::string out;  // where the caller writes the report: refused when it is a file the spec reads
  uint64_t seed = 1;
  uint32_t repeat = 3;
  double structure_target = 0.03, cost_target = 0.10;
};

struct ClusterValidationOutput {
  Json json;
  std::string text;
};

ClusterValidationOutput validate_cluster(const ClusterValidateArgs& a);

}  // namespace moesim::harness
