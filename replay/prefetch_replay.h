// `replay --prefetch`: the cache-only replay (replay/cache_replay.h) with a prefetch policy (core/prefetch.h)
// on top, measured with the same counters and metric names as `run` (serving/pipeline.h PrefetchCounters, JSON
// from serving/metrics.h prefetch_counters_json): accuracy = useful / issued, coverage = useful / lookups,
// useless prefetches and their bytes.
//
// The loop follows the pipeline's order (serving/pipeline.cpp) without its timing, each invocation walked by
// core/invocation_walker.h like the pipeline's: its lookups (a prefetched expert looked up by the invocation
// it was for counts as useful, by any other as useless), its refreshes, its evictions (a prefetched expert
// evicted before use is useless), then the policy's proposals for later layers: one already resident (or
// already prefetched) is counted as such, the others are admitted with BasicCache::prefetch (admitted ahead
// of use, not a lookup; its evictions count as above) or declined when the partition cannot hold them. A
// prefetch without a named target is for the next invocation of its layer (core/prefetch.h
// default_prefetch_target). Prefetches still unused at the end are useless. Without a timing model nothing is
// late: "late" is null. bytes: the expert sizes of the issued prefetches (0 when unknown).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/counters.h"
#include "core/workload.h"
#include "replay/cache_replay.h"

namespace moesim::replay {

struct PrefetchReplayConfig {
  ReplayConfig cache;
  std::string prefetch;  // "transition:train=PATH", "oracle:accuracy=0.8", ... (see `moesim policies`)
};

struct PrefetchReplayResult {
  ReplayResult replay;
  std::string prefetch;  // as given
  PrefetchCounters counters;
};

// `w` must describe the same stream as `in` (serving::workload_view of the stream `in` was built from).
// Results in the order of `configs`, whatever the thread count (each run owns its policies and their seeded
// random streams; replay/replay_sweep.h).
std::vector<PrefetchReplayResult> replay_prefetch_sweep(const ReplayInput& in, const WorkloadView& w,
                                                        const std::vector<PrefetchReplayConfig>& configs,
                                                        unsigned threads, uint64_t seed,
                                                        const std::function<void()>& on_done = {});

Json to_json(const PrefetchReplayResult& r);

}  // namespace moesim::replay
