// Metrics of a pipeline run (ARCHITECTURE.md §7), as JSON:
//   ttft            prefill step durations (time to first token of each sequence)
//   tpot            decode step durations (time per output token of the batch group)
//   end_to_end      per request group (B sequences decoding together; one sequence when B = 1): from its
//                   first prefill step's start to its last step's end
//   tokens_per_s    generated tokens / makespan, where a prefill produces a sequence's first token and a
//                   decode step one token per sequence decoding; decode_tokens_per_s over decode time only
//   layer_makespan  per layer invocation, from the layer's start (its dense op) to its last op's end;
//                   all invocations and decode invocations only
//   hit rates       cumulative and decode-only (lookup semantics of ARCHITECTURE.md §4)
//   bytes read      from the SSD
//   utilization     of every resource: busy time / (units * makespan)
// Every distribution gives count, mean, p50, p90, p99 and max; percentiles use the nearest-rank method
// (the smallest value with at least p% of the values at or below it), so they are actual samples.
#pragma once

#include <vector>

#include "core/json_io.h"
#include "core/pipeline.h"

namespace moesim {

struct Distribution {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

Distribution summarize(std::vector<double> values);  // all zero when empty
double percentile_nearest_rank(const std::vector<double>& sorted, double p);
Json to_json(const Distribution& d);  // seconds; the statistics are null when count is 0

Json metrics_json(const PipelineResult& r);

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
