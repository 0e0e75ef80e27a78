// Miss-ratio curves in one pass (`moesim replay --mrc`): the counters of a replay at every capacity of a
// list, without one replay per capacity.
//
// LRU, exact (lru_mrc): by stack distances (Mattson et al., 1970). Under moesim's lookup semantics
// (docs/architecture.md §4, core/expert_cache.h) LRU keeps the stack property at EVERY capacity, the in-use
// rule included: an invocation's keys are all at the top of the recency stack when it evicts (each was just
// looked up or refreshed), so evicting the least recent key that is not in use evicts the least recent key
// of all, until only the invocation's keys remain; then the excess passes through, again least recent first.
// After every invocation the cache of capacity C therefore holds the longest prefix of the recency stack
// (most recent first, keys ordered by their last touch, the invocation's refreshes included) whose weights
// sum to at most C. Within an invocation nothing is evicted and each key is looked up once, so a lookup hits
// iff its key lies in that prefix as it stood when the invocation began: iff its distance -- the weights of
// the keys touched since its last touch, plus its own -- is at most C. One pass computes every lookup's
// distance (a Fenwick tree over touch times, renumbered when it fills, O(log keys) per touch) and counts it
// against every capacity at once; the other counters follow exactly as well: an invocation is over capacity
// iff its keys weigh more than C, the evictions are the misses less the keys resident at the end (the final
// stack's prefix). So every CacheCounters field equals the per-capacity replay's (tests pin it, 100
// capacities on the bundled traces, both scopes, experts and bytes). Weights: 1 for capacities in experts,
// bytes for a global byte budget over layers of different expert sizes (core/cache_config.h); capacities of
// different weightings take one pass each. Per-layer scope: each layer is a stack of its own.
//
// Other policies (shards_mrc): spatially hashed sampling, SHARDS (Waldspurger et al., FAST'15) in its
// miniature-simulation form for policies without the stack property (Waldspurger et al., USENIX ATC'17):
// the keys whose hash (XXH64 with a salt) falls below rate R of the hash space are kept, every invocation is
// restricted to them (empty ones dropped, next uses and frequencies recomputed on the sample), and the policy
// replays that sample once per capacity, each partition's capacity scaled by the fraction of its keys that
// were kept. The hit ratio of the sample estimates the hit ratio of the whole stream; counts are that ratio
// times the stream's exact lookups. Error: the estimate is unbiased only in the limit of many sampled keys;
// with an MoE trace's few keys (hundreds to thousands) its error is dominated by which keys were drawn, so it
// is measured, not assumed: `salts` independent samples give each point a mean and a standard error (the
// spread of the salts' estimates / sqrt(salts)), and tests/replay/mrc_test.cpp bounds the error against
// exact curves and replays on the bundled traces (README, `replay --mrc`, states the bound it pins). Only the
// hit, miss and read counts are estimated; evictions and over-capacity invocations are not (left 0, and the
// JSON and CSV leave them out).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "replay/cache_replay.h"

namespace moesim::replay {

struct MrcResult {
  std::string method;  // "stack-distance" (exact) or "shards"
  double sample_rate = 1;
  uint32_t salts = 0;                             // SHARDS samples averaged
  double seconds = 0;                             // the whole curve's time
  std::vector<ReplayResult> points;               // one per capacity, in the order given
  std::vector<std::vector<uint64_t>> layer_hits;  // [point][layer]: hits of each layer's keys (exact only)
  std::vector<uint64_t> layer_lookups;            // [layer]
  std::vector<double> hit_pct_stderr;             // [point], SHARDS only: standard error over the salts
};

// Exact LRU curve: `policy` must be LRU ("lru"). Capacities are validated as replay's (cache_config).
MrcResult lru_mrc(const ReplayInput& in, CacheScope scope, const std::vector<CacheCapacity>& capacities);

struct ShardsOptions {
  double rate = 0.1;   // fraction of the hash space kept, (0, 1]
  uint32_t salts = 1;  // independent samples (salt 1..salts), averaged
};
// Estimated curve of any eviction policy. Throws moesim::Error for a bad policy, capacity or rate.
MrcResult shards_mrc(const ReplayInput& in, const std::string& policy, CacheScope scope,
                     const std::vector<CacheCapacity>& capacities, const ShardsOptions& opt);

// {"method", "exact", "sample_rate", "salts", "mrc_s", "layer_lookups", "points": [...]}: each point replay's
// to_json (without its timings) plus "miss_rate", and "layer_hits" (exact) or "estimated" and
// "hit_rate_stderr" (SHARDS, null with one salt).
Json to_json(const MrcResult& m);

}  // namespace moesim::replay
