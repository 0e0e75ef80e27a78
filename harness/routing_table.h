// Shared by `moesim replay`, `run` and `compare` for routing policies: the --routing list and the
// Table-2 layout of the Cache-Conditional Experts paper (model, cache size, routing, lifetime, miss rate),
// with deviation columns that say how much each routing policy changed (core/routing_metrics.h).
#pragma once

#include <string>
#include <vector>

#include "core/cache_config.h"
#include "replay/routing_replay.h"
#include "traces/trace.h"

namespace moesim::harness {

// "--routing a;b" or "a,b" (a comma starts a new spec only before a routing policy name), each validated
// (unknown policy or parameter: an Error listing the known ones).
std::vector<std::string> split_routing_list(const std::vector<std::string>& values);

// "original" for identity, else the canonical spec.
std::string routing_label(const std::string& canonical);

// The Table-2 layout, one row per result; `synthetic` labels the rows.
std::string routing_replay_table(const std::vector<replay::RoutingReplayResult>& rs, const traces::TraceInfo& info,
                                 CacheScope scope);

}  // namespace moesim::harness
