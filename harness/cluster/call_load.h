// How a call's overhead in an emulated cluster depends on what else is running on the host, for
// `validate --cluster` (harness/cluster/cluster_validation.cpp): from a run's calls, the coordinator's
// overhead of each server op (its time before the server took it and after its work until the coordinator
// took the reply) against the other calls in flight when it was made, and against those of them that were
// using a CPU then (in their hand-offs or their work; a call waiting for its unit or for the network uses
// none). A report, not a model: bench/results/cluster-calls-2026-12-06.md tried two models of it and kept
// neither. And the points of the calibration's short serve (overhead_points), whose line is reported beside
// the cost.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/json_io.h"

namespace moesim::harness {

// One call of a run on the coordinator's clock. kind 0 dense, 1 expert, 2 invoke (others are not calls of the
// model). received: when the server took it (an invocation: when it began to send); start, end: its work on
// the unit (an invocation: the whole remote part); returned: when the coordinator took the reply.
struct CallSpan {
  uint8_t kind = 0;
  double submitted = 0, received = 0, start = 0, end = 0, returned = 0;
};

// Per kind (dense, expert) and per count of other calls (0 .. 7, and "8" for 8 or more): the median and mean
// overhead (received - submitted) + (returned - end) and the number of calls (a mean far above the median: a
// tail of slow hand-offs), by calls in flight ("by_inflight") and
// by those of them using a CPU ("by_active"): {"expert": {"by_inflight": {"0": {"calls": n, "median_s":
// s}}}}. Calls made at the same time count each other, in whichever order they are given.
Json overhead_by_concurrency(const std::vector<CallSpan>& calls);

// The dense and expert calls' overheads measured as the calibration measures its own
// (harness/cluster/cluster_validation.cpp): per call, in submission order, (the calls in flight when it was
// made, counted as the simulator counts them -- every call, invocations included, made before it and not yet
// returned -- , (received - submitted) + (returned - end) + handoff_s), handoff_s being a server's hand-off
// to an idle unit, which the model holds in the call overhead and the call's wait for its unit leaves out.
// The points of the calibration's short serve, for fit_call_overhead (harness/cluster/call_overhead_fit.h).
std::vector<std::pair<double, double>> overhead_points(const std::vector<CallSpan>& calls, double handoff_s);

}  // namespace moesim::harness
