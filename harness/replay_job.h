// `moesim replay`: the cache-only fast path (replay/cache_replay.h): hit rates of eviction policies on a
// trace, for one capacity or a sweep, per-layer or global scope, without the timing model.
//
// Capacity (core/eviction.h, CacheCapacity):
//   a plain number N = N experts PER LAYER: scope layer -> every layer's cache holds N experts;
//                                           scope global -> one cache of N x layers experts.
//   a size with a unit ("3000MiB", "8GiB") = the total byte budget: scope layer -> budget / layers bytes per
//     layer (rounded down to whole experts); scope global -> one cache of that many bytes. Expert sizes come
//     from the trace header (expert_bytes) or, when it has none, from --model; an error if neither.
// Degenerate configurations: a capacity below one expert or below the top-k of a layer is an error; an
// invocation (e.g. a prefill pass) needing more experts than the capacity is counted and reported.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct ReplayArgs {
  std::string trace;
  traces::LoadOptions load;  // --format, --fields, --model
  std::vector<std::string> policies;
  std::string scope = "global";
  std::vector<std::string> budgets;  // --budget, and the deprecated --capacity/--sweep
  uint32_t batch = 1;
  unsigned threads = 1;
  bool json = false;
  std::string out = "-";
  // Routing policies and lifetimes (replay/routing_replay.h): any of these takes the token-level path.
  std::vector<std::string> routing;
  bool lifetime = false;
  // Prefetch policies (replay/prefetch_replay.h): each runs on top of every (eviction, budget).
  std::vector<std::string> prefetch;
  uint64_t seed = 1;
  uint32_t oracle_passes = 4;
  // Miss-ratio curves (replay/mrc.h): one pass for every budget. LRU is exact (stack distances); another
  // policy is estimated by SHARDS at `mrc_sample` of the keys, averaged over `mrc_salts` samples. Without
  // --budget the curve covers every experts-per-layer count from top-k to all experts. `csv` and `plot` name
  // files for the curve's table and its figure (scripts/plot_mrc.py, Debian's python3-matplotlib).
  bool mrc = false;
  double mrc_sample = 0.1;
  uint32_t mrc_salts = 3;
  std::string csv, plot;
  // A trace already loaded (the Python module's Trace): replayed instead of reading `trace`, which then only
  // names it in the output; `load` must be the options it was loaded with.
  std::shared_ptr<const traces::Trace> loaded;
};

// Replays the trace through every (policy, budget[, routing | prefetch]) and returns the table or the JSON
// text (a.json) that `moesim replay` prints (cli/ writes it); a.out is only checked to be writable.
std::string replay_output(const ReplayArgs& a);

}  // namespace moesim::harness
