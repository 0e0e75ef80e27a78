// Eviction (docs/architecture.md §3, lookup semantics §4), in three headers:
//   core/cache_config.h     scope, capacity, CacheConfig, the lookup stream as spans, CacheCounters;
//   core/eviction_policy.h  the EvictionPolicy interface every policy in policies/eviction/ implements, and
//                           its registry (MOESIM_REGISTER(EvictionRegistry, ...));
//   core/expert_cache.h     the cache that drives a policy (BasicCache; ExpertCache for the timed pipeline;
//                           EvictionPolicyBase, which gives a policy the devirtualized replay fast path).
// Including this header includes all three.
#pragma once

#include "core/cache_config.h"
#include "core/eviction_policy.h"
#include "core/expert_cache.h"
