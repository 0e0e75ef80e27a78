// How a call's overhead in an emulated cluster depends on what else is running on the host, for
// `validate --cluster` (harness/cluster/cluster_validation.cpp): from a run's calls, the coordinator's
// overhead of each server op (its time before the server took it and after its work until the coordinator
// took the reply) against the other calls in flight when it was made, and against those of them that were
// using a CPU then (in their hand-offs or their work; a call waiting for its unit or for the network uses
// none). A report, not a model: bench/results/cluster-calls-2026-12-06.md tried two models of it and kept
// neither.
#pragma once

#include <cstdint>
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
// s}}}}.
Json overhead_by_concurrency(const std::vector<CallSpan>& calls);

}  // namespace moesim::harness
