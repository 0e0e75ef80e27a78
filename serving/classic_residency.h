// The classic expert caches as a Residency (core/residency.h): one pool of full tensors managed by an
// eviction policy (LRU ... Belady, static-freq), and the two-tier cache of a discrete GPU.
//
//   single pool   the case "one F pool" (docs/architecture.md §9): a lookup is F (hit) or M (miss,
//                 admitted); counters are exactly ExpertCache's, so results equal the replay fast path's.
//   two tiers     a device-memory (VRAM) cache backed by a host-memory (DRAM) cache, both with the same
//                 eviction policy and scope, filled inclusively: every expert read from the SSD is admitted
//                 to both (each tier then evicts on its own: non-inclusive, non-exclusive).
//                 A device hit is F in device memory; a device miss that hits in host memory is F in host
//                 memory (the pipeline then copies it over the link instead of reading the SSD) and is
//                 admitted to the device cache. The host cache sees only device misses (an L2), so experts
//                 hot in VRAM age out of DRAM. Two copies are safe: weights are read-only, never stale.
//
// Memory events: kAdmit when an expert enters a pool, kEvict when it leaves (bytes = its layer's expert
// bytes from CacheConfig::expert_bytes; 0 when unknown).
#pragma once

#include <memory>
#include <string>

#include "core/eviction.h"
#include "core/residency.h"
#include "serving/system.h"

namespace moesim::serving {

// eviction_spec: `moesim policies` syntax. host_cfg: nullptr for one pool; otherwise the host tier (`tier`
// must then be kDevice). Throws moesim::Error on a bad spec or configuration.
std::unique_ptr<Residency> make_classic_residency(const PolicySpec& eviction_spec,
                                                  const CacheConfig& device_cfg, MemoryTier tier,
                                                  const CacheConfig* host_cfg);

// The expert cache of a run (offload, layer-offload): ctx.cfg's budget and scope in device (or unified)
// memory, with a host tier behind it when ctx.cfg.host_budget_bytes > 0; oracle policies get the stream's
// next uses and frequencies. Sets r's capacities. Throws moesim::Error for a host tier on unified memory.
std::unique_ptr<Residency> make_run_expert_cache(const SystemBuildContext& ctx,
                                                 const PolicySpec& eviction_spec, RunResult& r);

}  // namespace moesim::serving
