// Replay with a routing policy: the cache-only fast path of replay/cache_replay.h, token by token. For
// each invocation the routing policy rewrites its tokens' selections against the cache's residency
// (core/routing.h), the unique-expert lookups are derived from the rewritten selections, and the cache
// looks them up. It also measures what replay/cache_replay.h does not: cache lifetimes
// (core/routing_metrics.h, the Cache-Conditional Experts paper, Table 2) and the routing's deviation. With
// identity routing the lookups are the stream's own, so the counters equal replay::replay's exactly (tests pin
// it).
//
// Miss rate: misses / the ROUTER's lookups (the unique experts the unmodified routing asks for), so that a
// policy that merges or drops experts is compared on the same denominator as the original routing (the
// paper normalises pruning "using k" the same way). hit_pct keeps the lookups actually made.
//
// Oracle information follows the rewritten routing. A cache-dependent rewrite makes the future routing
// depend on the cache, so it is computed by fixed-point passes: pass 1 gives the oracle (Belady's next use,
// static-freq's whole-trace frequencies) the router's routing; pass p+1 gives it the routing pass p
// produced. When a pass reproduces the routing it was given, the oracle saw exactly the routing it ran on
// (converged); otherwise the last pass is reported with converged = false and the number of passes.
// Non-oracle evictions need one pass (their behaviour does not read the future).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/routing_metrics.h"
#include "replay/cache_replay.h"
#include "traces/token_routing.h"
#include "traces/trace.h"

namespace moesim::replay {

struct RoutingReplayConfig {
  std::string eviction = "lru";
  std::string routing = "identity";
  CacheScope scope = CacheScope::kPerLayer;
  CacheCapacity capacity;
  uint32_t oracle_passes = 4;  // at most, for an oracle eviction under a cache-dependent routing
};

struct RoutingReplayResult {
  ReplayResult
      replay;  // eviction (canonical), capacity, counters over the lookups made, replay_s of all passes
  std::string routing;  // canonical
  uint64_t router_lookups = 0, router_decode_lookups = 0;
  double miss_pct = 0, decode_miss_pct = 0;  // misses / router lookups (see the header)
  LifetimeStats lifetime;
  RoutingDeviation deviation;
  Json routing_counters = Json::object();
  bool oracle = false;    // the eviction reads next use or whole-trace frequencies
  uint32_t passes = 1;    // fixed-point passes run
  bool converged = true;  // the oracle saw the routing it ran on
};

// A stream and its trace prepared once for any number of runs. References `base` and `trace`.
class RoutingReplayInput {
 public:
  RoutingReplayInput(const ReplayInput& base, const traces::Trace& trace);
  const ReplayInput& base() const { return *base_; }
  const TokenRoutingView& tokens() const { return view_; }
  const RoutingSetup& setup() const { return setup_; }
  uint64_t clock(size_t invocation) const { return clock_[invocation]; }  // token clock at its start

 private:
  const ReplayInput* base_;
  traces::TokenRouting tokens_;
  TokenRoutingView view_;
  RoutingSetup setup_;
  std::vector<uint64_t> clock_;
};

RoutingReplayResult replay_routing(const RoutingReplayInput& in, const RoutingReplayConfig& rc);
// Results in the order of `configs`, identical for every thread count (threads = 0: all cores). Every
// configuration is validated (eviction, routing, capacity) before any runs.
std::vector<RoutingReplayResult> replay_routing_sweep(const RoutingReplayInput& in,
                                                      const std::vector<RoutingReplayConfig>& configs,
                                                      unsigned threads,
                                                      const std::function<void()>& on_done = {});

Json to_json(const RoutingReplayResult& r);

}  // namespace moesim::replay
