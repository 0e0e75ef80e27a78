// One layer invocation through a cache: the lookup semantics of docs/architecture.md §4 ("Lookup semantics"),
// defined once for every path that looks experts up -- the timed pipeline (serving/pipeline.cpp), the
// devirtualized replay fast path (core/expert_cache.h replay_stream) and the replays with a routing or a
// prefetch policy (replay/).
//
// A walk of invocation `inv` of a lookup stream (LookupView):
//   1. cache.begin_invocation(layer, decode);
//   2. each UNIQUE expert of the invocation is looked up once, in router order; the caller's `on_lookup`
//      sees each result before the next lookup (the pipeline builds the expert's loads there);
//   3. the router's duplicate touches (the stream's refreshes, traces/lookup_stream.h) refresh their
//      experts -- only those the invocation still looks up, since a routing rewrite may have dropped one;
//   4. cache.end_invocation(lookups): eviction after every admission, never of an expert the invocation
//      uses (the cache's contract: core/expert_cache.h BasicCache, core/residency.h).
//
// Two inputs: the stream's own lookups (walk_stream: every refresh names one of them, ReplayInput checks
// it), or the invocation's demands after a routing rewrite (walk_demands: ExpertDemand-like values with
// expert, next_use and tokens). Cache is BasicCache<P>, ExpertCache or a Residency; a cache whose lookup
// takes the token count (Residency) gets it, one whose end_invocation reports evictions (BasicCache) fills
// `evicted` when given. Header-only so the fast path inlines it into each devirtualized policy's loop.
//
// It lives in core/ because the pipeline does; it moves to serving/ with the pipeline, and replay/ keeps
// using it from there.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cache_config.h"

namespace moesim {

class InvocationWalker {
 public:
  // experts: per layer; sizes walk_demands' scratch (0 when only walk_stream is used).
  explicit InvocationWalker(uint32_t experts = 0) : experts_(experts), requested_(experts, 0) {}

  // Invocation `inv` with the stream's own lookups. on_lookup(j, key, result): j indexes v.key.
  template <typename Cache, typename OnLookup>
  static void walk_stream(Cache& cache, const LookupView& v, uint32_t inv, OnLookup&& on_lookup,
                          std::vector<uint32_t>* evicted = nullptr) {
    const uint32_t b = v.inv_begin[inv], e = v.inv_begin[inv + 1];
    const uint32_t* keys = v.key.data();
    cache.begin_invocation(v.inv_layer[inv], v.inv_phase[inv] == 1);
    if (!v.next_use.empty()) {
      const uint32_t* next = v.next_use.data();
      for (uint32_t j = b; j < e; ++j) on_lookup(j, keys[j], cache.lookup(keys[j], next[j]));
    } else {
      for (uint32_t j = b; j < e; ++j) on_lookup(j, keys[j], cache.lookup(keys[j], kNeverUsedAgain));
    }
    if (!v.refresh_begin.empty())
      for (uint32_t r = v.refresh_begin[inv]; r < v.refresh_begin[inv + 1]; ++r)
        cache.refresh(keys[v.refresh[r]]);
    end(cache, e - b, evicted);
  }

  // Invocation `inv` with `demands` (unique experts of its layer, in the order to look them up) in place
  // of the stream's lookups; refreshes of experts no longer demanded are dropped. on_lookup(d, key, result).
  template <typename Cache, typename Demands, typename OnLookup>
  void walk_demands(Cache& cache, const LookupView& v, uint32_t inv, const Demands& demands,
                    OnLookup&& on_lookup, std::vector<uint32_t>* evicted = nullptr) {
    const uint32_t layer = v.inv_layer[inv];
    const uint32_t base_key = layer * experts_;
    cache.begin_invocation(layer, v.inv_phase[inv] == 1);
    uint32_t n = 0;
    for (const auto& d : demands) {
      const uint32_t key = base_key + d.expert;
      if constexpr (requires { cache.lookup(key, d.next_use, d.tokens); })
        on_lookup(d, key, cache.lookup(key, d.next_use, d.tokens));
      else
        on_lookup(d, key, cache.lookup(key, d.next_use));
      ++n;
    }
    if (!v.refresh_begin.empty() && v.refresh_begin[inv] != v.refresh_begin[inv + 1]) {
      for (const auto& d : demands) requested_[d.expert] = 1;
      for (uint32_t r = v.refresh_begin[inv]; r < v.refresh_begin[inv + 1]; ++r) {
        const uint32_t key = v.key[v.refresh[r]];
        if (requested_[key - base_key]) cache.refresh(key);
      }
      for (const auto& d : demands) requested_[d.expert] = 0;
    }
    end(cache, n, evicted);
  }

 private:
  template <typename Cache>
  static void end(Cache& cache, uint32_t lookups, std::vector<uint32_t>* evicted) {
    if constexpr (requires { cache.end_invocation(lookups, evicted); })
      cache.end_invocation(lookups, evicted);
    else
      cache.end_invocation(lookups);  // a Residency reports its evictions as memory events instead
  }

  uint32_t experts_;
  std::vector<uint8_t> requested_;  // [experts] scratch of walk_demands, all zero between calls
};

}  // namespace moesim
