// Shared fixtures of the replay tests: the three bundled real traces, loaded once, with their lookup
// streams; and independent reference implementations of LRU, FIFO and Belady written the obvious way
// (std::list / std::set, no shared code with policies/eviction/) to cross-check the fast ones.
#pragma once

#include <gtest/gtest.h>

#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/eviction.h"
#include "replay/cache_replay.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

namespace moesim::testing {

struct LoadedTrace {
  std::string name;
  traces::Trace trace;
  traces::LookupStream stream;
  std::unique_ptr<replay::ReplayInput> input;
};

inline const std::vector<std::unique_ptr<LoadedTrace>>& real_traces() {
  static const auto traces = [] {
    std::vector<std::unique_ptr<LoadedTrace>> v;
    for (const char* name : {"gemma-4-26b-a4b", "gpt-oss-120b", "qwen3-30b-a3b"}) {
      auto t = std::make_unique<LoadedTrace>();
      t->name = name;
      t->trace = traces::load_trace(test::bundled_data("traces/") + name + ".route.csv");
      t->stream = traces::build_lookup_stream(t->trace);
      t->input = std::make_unique<replay::ReplayInput>(t->stream, t->trace.info().top_k,
                                                       t->trace.info().expert_bytes);
      v.push_back(std::move(t));
    }
    return v;
  }();
  return traces;
}

inline replay::ReplayConfig experts_config(const std::string& policy, CacheScope scope, uint64_t per_layer) {
  return {policy, scope, {CacheCapacity::Unit::kExperts, per_layer}};
}

// Reference semantics (docs/architecture.md §4 and core/eviction.h), written independently:
//   per invocation: look up each unique key (hit, or admit); apply its refreshes (LRU: to the front); then
//   evict, in policy order, keys NOT used by the invocation until the partition fits; if it still does not
//   fit, evict in policy order among all keys (the excess passes through). Capacity in experts; partition =
//   layer (per-layer) or 0 (global).
struct RefCounts {
  uint64_t lookups = 0, hits = 0, decode_hits = 0, evictions = 0;
};

enum class RefPolicy { kLru, kFifo, kBelady };

inline RefCounts reference_replay(const traces::LookupStream& s, RefPolicy policy, CacheScope scope,
                                  uint64_t per_layer) {
  const uint32_t parts = scope == CacheScope::kGlobal ? 1 : s.layers;
  const uint64_t cap = scope == CacheScope::kGlobal ? per_layer * s.layers : per_layer;
  std::vector<std::list<uint32_t>> order(parts);  // LRU: front = most recent; FIFO: front = newest
  std::vector<std::set<std::pair<uint32_t, uint32_t>>> by_next(parts);  // Belady: (next use, key)
  std::map<uint32_t, uint32_t> next_of;                                 // Belady: key -> next use
  std::set<uint32_t> resident;
  RefCounts rc;
  auto evict_from = [&](uint32_t p, const std::set<uint32_t>& protect) -> bool {
    if (policy == RefPolicy::kBelady) {
      for (auto it = by_next[p].rbegin(); it != by_next[p].rend(); ++it)
        if (!protect.count(it->second)) {
          resident.erase(it->second);
          next_of.erase(it->second);
          by_next[p].erase(std::next(it).base());
          return true;
        }
      return false;
    }
    for (auto it = order[p].rbegin(); it != order[p].rend(); ++it)
      if (!protect.count(*it)) {
        resident.erase(*it);
        order[p].erase(std::next(it).base());
        return true;
      }
    return false;
  };
  for (size_t i = 0; i < s.invocations(); ++i) {
    const uint32_t p = scope == CacheScope::kGlobal ? 0 : s.inv_layer[i];
    std::set<uint32_t> in_use;
    for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j) {
      const uint32_t k = s.key[j];
      in_use.insert(k);
      ++rc.lookups;
      const bool hit = resident.count(k) > 0;
      if (hit) {
        ++rc.hits;
        if (s.inv_phase[i] == 1) ++rc.decode_hits;
      }
      if (policy == RefPolicy::kBelady) {
        if (hit) by_next[p].erase({next_of[k], k});
        next_of[k] = s.next_use[j];
        by_next[p].insert({s.next_use[j], k});
      } else if (policy == RefPolicy::kLru) {
        if (hit) order[p].remove(k);
        order[p].push_front(k);
      } else if (!hit) {
        order[p].push_front(k);
      }
      resident.insert(k);
    }
    // Refreshes (duplicate touches): LRU moves the key to the front; FIFO and Belady ignore them.
    for (uint32_t r = s.refresh_begin[i]; r < s.refresh_begin[i + 1] && policy == RefPolicy::kLru; ++r) {
      order[p].remove(s.key[s.refresh[r]]);
      order[p].push_front(s.key[s.refresh[r]]);
    }
    auto size = [&] { return policy == RefPolicy::kBelady ? by_next[p].size() : order[p].size(); };
    while (size() > cap && evict_from(p, in_use)) ++rc.evictions;
    while (size() > cap && evict_from(p, {})) ++rc.evictions;
  }
  return rc;
}

}  // namespace moesim::testing
