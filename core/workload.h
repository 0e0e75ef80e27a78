// WorkloadView: what the serving pipeline walks, seen through spans so that core/ does not depend on
// traces/ (docs/architecture.md §2). serving/workload_view.h builds it from a traces::LookupStream, whose
// header states the semantics (steps, invocations, unique experts with token counts, next_use); this is
// a view of the same arrays, nothing is re-derived. The LookupStream must outlive the view.
#pragma once

#include <cstdint>
#include <span>

#include "core/eviction.h"
#include "core/routing.h"

namespace moesim {

struct WorkloadView {
  uint32_t layers = 0;
  uint32_t experts = 0;  // per layer; key = layer * experts + expert
  uint32_t batch = 1;
  uint32_t top_k = 0;  // experts each token picks per layer (RoutingContext::top_k)
  // Steps: one prefill pass of one sequence, or one decode token step of a batch group.
  std::span<const uint32_t> step_begin;   // [steps + 1] offsets into invocations
  std::span<const uint8_t> step_phase;    // 0 = prefill, 1 = decode
  std::span<const uint32_t> step_tokens;  // prompt tokens (prefill) or sequences decoding (decode)
  // Per sequence: its first step (its prefill, or its first decode step) and the last step it takes part
  // in. Empty for a hand-made workload without sequences: its latencies are then not measured.
  std::span<const uint32_t> seq_first_step, seq_last_step;
  LookupView lookups;                     // invocations and their unique keys (with next_use)
  std::span<const uint32_t> tokens;       // [lookups] tokens of the invocation routed to the key
  // Each invocation's tokens (core/routing.h); empty when the workload was built without its trace, which
  // only identity routing accepts.
  TokenRoutingView routing;

  size_t steps() const { return step_phase.size(); }
};

}  // namespace moesim
