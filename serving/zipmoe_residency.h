// ZipMoE's compression-aware cache pools with rank-based dispatch (ZipMoE §3.4 "Pool Dispatching"), as a
// Residency (core/residency.h). The in-pool eviction is any policy of the eviction registry: freq (the
// paper's lowest-frequency rule, policies/eviction/freq.cpp) or, for the Fig. 10 ablation, fifo, marking,
// lru.
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
//
// In-pool policies: each active pool owns one EvictionPolicy over per-layer partitions, and every pool's
// policy sees every lookup of every expert (as if each used expert were admitted to every pool), because an
// expert's history does not restart when dispatch moves it between pools: freq's counts are the layer's
// activation counts, LRU's order the last uses. A pool takes its policy's first choice that it holds; a
// choice it does not hold (the expert left the pool by dispatch) is dropped from the policy until its next
// use. So FIFO's admission is the expert's first use since its policy last dropped it, and a prefetch
// admission counts as a use for freq (the policy cannot tell it from a lookup).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "core/params.h"
#include "core/residency.h"

namespace moesim::serving {

struct ZipMoePoolsConfig {
  uint32_t layers = 0;
  uint32_t experts = 0;                    // per layer
  std::array<uint32_t, 4> capacity{};      // S_p: experts per layer of pools F, C, S, E (0 = inactive)
  std::array<uint64_t, 4> expert_bytes{};  // bytes one expert takes in pool F, C, S, E
  std::array<MemoryTier, 4> tier{};        // UMA: all kUnified; discrete GPU: F kDevice, C/S/E kHost
  uint32_t delta = 0;                      // dispatch tolerance in ranks
  PolicySpec evict{"freq", {}};            // in-pool eviction spec (`moesim policies`): freq is the paper's
};

// Throws moesim::Error on a bad eviction spec (or one that needs oracle information) or an empty shape.
std::unique_ptr<Residency> make_zipmoe_residency(const ZipMoePoolsConfig& cfg);

}  // namespace moesim::serving
