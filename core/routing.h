// Routing-rewrite policies (ARCHITECTURE.md §3): lossy policies that change which experts an invocation
// uses (Max-Rank, Cumulative-Probability-Threshold, Cache-Prior, pruning, BuddyMoE). Implementations live
// in policies/routing/, one file each; `identity` (policies/routing/identity.cpp) changes nothing.
//
// The pipeline calls rewrite() once per layer invocation, before the cache lookups, with the
// invocation's unique experts and their token counts (traces/lookup_stream.h semantics) and a view of
// which experts are resident. The policy edits the list in place (replace an expert id, merge token
// counts, drop an expert); the pipeline measures what changed -- lookups whose expert was replaced or
// dropped, and the tokens they carried -- and reports it with the metrics, so no policy can change
// routing silently. Token-level policies that need each token's top-k and router weights will get them
// through RoutingContext when the trace carries them (an extension of this struct, not a new interface).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/compression_state.h"
#include "core/registry.h"

namespace moesim {

struct ExpertDemand {
  uint16_t expert = 0;
  uint32_t tokens = 0;    // tokens of the invocation routed to it
  uint32_t next_use = 0;  // next invocation using the same (layer, expert), for oracle caches
};

// What a policy may ask about the cache without touching it.
class ResidencyView {
 public:
  virtual ~ResidencyView() = default;
  virtual ExpertState state(uint32_t layer, uint32_t expert) const = 0;
};

struct RoutingContext {
  uint32_t layer = 0;
  bool decode = false;
  uint32_t top_k = 0;
  const ResidencyView* residency = nullptr;
};

struct RoutingSetup {
  uint32_t layers = 0;
  uint32_t experts = 0;
  uint32_t top_k = 0;
};

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  virtual void rewrite(const RoutingContext& ctx, std::vector<ExpertDemand>& demands) = 0;
};

using RoutingRegistry = Registry<RoutingPolicy, const RoutingSetup&>;
std::unique_ptr<RoutingPolicy> make_routing_policy(const std::string& spec, const RoutingSetup& setup);

}  // namespace moesim
