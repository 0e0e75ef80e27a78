// ZipMoE's compression-aware cache pools with rank-based dispatch (ZipMoE §3.4 "Pool Dispatching"), as a
// Residency (core/residency.h), and the Fig. 10 ablation variants whose in-pool eviction is FIFO, Marking
// or LRU instead of the paper's lowest-frequency rule.
//
// Pools are per layer (the planner sizes one sparse layer, ZipMoE Appendix C): each layer has up to four
// pools F < C < S < E holding capacity[p] experts; an expert in pool F keeps its full tensors, C its
// SM-chunks and E-chunks, S its SM-chunks, E its E-chunks (core/compression_state.h).
//
// Dispatch: each layer keeps a runtime frequency list (activation counts, +1 per lookup). A lookup answers
// the state the expert HAD; at end_invocation, with every count of the invocation in, each expert it used
// goes to the first active pool p with rank r < tau_p = sum_{q <= p} capacity[q] + delta, and keeps exactly
// that pool's components (its use produced all of them, so a change of pool costs no I/O); past every
// threshold it keeps nothing after execution. Then a pool holding more than capacity[p] experts of the
// layer evicts by its in-pool policy,
// never an expert of the current invocation unless the pool cannot hold the invocation's own experts (then
// the invocation is counted as degenerate, as core/expert_cache.h does).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "core/residency.h"

namespace moesim::serving {

struct ZipMoePoolsConfig {
  uint32_t layers = 0;
  uint32_t experts = 0;                     // per layer
  std::array<uint32_t, 4> capacity{};       // S_p: experts per layer of pools F, C, S, E (0 = inactive)
  std::array<uint64_t, 4> expert_bytes{};   // bytes one expert takes in pool F, C, S, E
  std::array<MemoryTier, 4> tier{};         // UMA: all kUnified; discrete GPU: F kDevice, C/S/E kHost
  uint32_t delta = 0;                       // dispatch tolerance in ranks
  std::string evict = "freq";               // freq (the paper's), lru, fifo, marking
  uint64_t seed = 1;                        // marking's random choices
};

// Throws moesim::Error on an unknown eviction name or an empty shape.
std::unique_ptr<Residency> make_zipmoe_residency(const ZipMoePoolsConfig& cfg);

}  // namespace moesim::serving
