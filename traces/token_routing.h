// The token-level routing of a workload (core/routing.h, TokenRoutingView): which trace rows (tokens) each
// invocation of the lookup stream serves, in the order the stream met them (traces/lookup_stream.h:
// prefill passes per sequence, layer by layer; decode steps of a batch group, the group's sequences in
// trace order). Routing policies read each token's top-k, weights and logits through it; the stream's
// unique-expert lookups are what identity routing derives from these rows.
#pragma once

#include <cstdint>
#include <vector>

#include "core/routing.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"

namespace moesim::traces {

struct TokenRouting {
  std::vector<uint32_t> inv_begin;  // [invocations + 1] into rows
  std::vector<uint32_t> rows;       // trace rows
  size_t invocations() const { return inv_begin.empty() ? 0 : inv_begin.size() - 1; }
};

// Built with the batch size of the stream; checked against it (same invocations and layers, and the same
// unique experts per invocation): a mismatch is a moesim::Error, never a silent misalignment.
TokenRouting build_token_routing(const Trace& trace, const LookupStream& stream);

// A view of `tr` over the trace's columns; both must outlive it.
TokenRoutingView token_routing_view(const TokenRouting& tr, const Trace& trace);

// The setup routing policies are built from (shape and which optional columns the trace has).
RoutingSetup routing_setup(const TraceInfo& info, const Trace& trace);

}  // namespace moesim::traces
