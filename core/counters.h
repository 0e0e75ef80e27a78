// What a run's cache and prefetch policies did, counted the same way by the timed pipeline (serving/pipeline.h)
// and the cache-only replays (replay/), and written as JSON with the same keys and units by every command that
// reports them (docs/cli-json.md). CacheCounters itself lives with the cache's configuration (core/cache_config.h).
#pragma once

#include <cstdint>

#include "base/json_io.h"
#include "core/cache_config.h"

namespace moesim {

struct PrefetchCounters {
  uint64_t proposed = 0;         // experts the policy named (after dropping duplicates and the current layer)
  uint64_t already_resident = 0;  // named experts already resident or in flight (nothing to do)
  uint64_t declined = 0;          // the residency would not keep them
  uint64_t issued = 0;            // loads started
  uint64_t useful = 0;            // issued and looked up by the invocation it was for (the next
                                  // invocation of its layer when the policy names none)
  uint64_t late = 0;              // of the useful ones, looked up while still loading
  uint64_t useless = 0;           // evicted before that lookup, used only later, or never used
  uint64_t bytes = 0;             // SSD bytes the issued loads read
  uint64_t useless_bytes = 0;     // of those, bytes of useless prefetches
};

// Cache counters as JSON, with the same keys and units in every command that reports them (replay's results,
// run's and compare's metrics.cache; docs/cli-json.md): invocations, lookups, hits, misses, hit_rate
// (fraction; null with no lookups), decode_lookups, decode_hits, decode_hit_rate (null with no decode
// lookups), read_bytes (bytes of the missed experts; null when expert sizes are unknown), evictions,
// over_capacity_invocations, max_over_capacity.
Json cache_counters_json(const CacheCounters& c, bool read_bytes_known);

// Prefetch counters with accuracy (useful / issued) and coverage (useful / lookups), the same keys in
// `run`/`compare` metrics and `replay` results. `timed`: late prefetches exist only with a timing model;
// the cache-only replay (timed = false) reports "late" as null.
Json prefetch_counters_json(const PrefetchCounters& p, uint64_t lookups, bool timed);

}  // namespace moesim
