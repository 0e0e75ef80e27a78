// Prefetch policies (docs/architecture.md §3 and §9): which experts of later layers to start loading while
// a layer runs. Implementations live in policies/prefetch/, one file each, registered with
// MOESIM_REGISTER(PrefetchRegistry, ...): `none` (default), `oracle:accuracy=p,lookahead=n` (the trace's
// true experts of the next n invocations of the same step, each kept with probability p and otherwise
// replaced by a random expert the invocation did not pick: the shape of a learned predictor of accuracy
// p), `layer-window:depth=d` (every expert of the next d layers, DeepSpeed-style).
//
// The pipeline calls propose() when a layer invocation starts (its dense op is submitted and its own
// lookups are done), then asks the residency to admit each proposed expert that is not resident
// (Residency::prefetch) and builds the loads; a later lookup that finds the expert still loading waits
// for it (a late prefetch). What was asked for is measured: accuracy (prefetched experts that their
// target invocation used), late prefetches, useless ones (evicted or never used) and the bytes they read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/registry.h"
#include "core/workload.h"

namespace moesim {

struct PrefetchContext {
  const WorkloadView* workload = nullptr;  // the whole run (oracle policies read later invocations)
  uint32_t invocation = 0;                 // index of the invocation that starts now
  uint32_t step = 0;                       // its step (workload step index)
  uint32_t layer = 0;
  bool decode = false;
};

struct PrefetchRequest {
  uint16_t layer = 0;
  uint16_t expert = 0;
  // The invocation expected to use it (for the oracle's next-use and the accuracy metric); kNoInvocation
  // when the policy does not know (layer-window).
  uint32_t target_invocation = 0xFFFFFFFFu;
};
inline constexpr uint32_t kNoInvocation = 0xFFFFFFFFu;

struct PrefetchSetup {
  uint32_t layers = 0;
  uint32_t experts = 0;
  uint32_t top_k = 0;
  uint64_t seed = 1;  // the run's seed (policies derive their own stream from it)
};

class PrefetchPolicy {
 public:
  virtual ~PrefetchPolicy() = default;
  // Appends the experts to load (any order; duplicates and experts of the current layer are ignored by
  // the pipeline). Deterministic for a given seed and call sequence.
  virtual void propose(const PrefetchContext& ctx, std::vector<PrefetchRequest>& out) = 0;
};

// Throws moesim::Error when a policy proposed an expert outside the model.
void check_prefetch_request(const PrefetchRequest& pr, uint32_t layers, uint32_t experts);

// The invocation a prefetch of `layer` that names no target is for: the next invocation of that layer
// within the next 2 x layers invocations after `inv`, or kNoInvocation.
inline uint32_t default_prefetch_target(const LookupView& v, uint32_t inv, uint32_t layer, uint32_t layers) {
  for (uint32_t i = inv + 1; i < v.invocations() && i <= inv + 2 * layers; ++i)
    if (v.inv_layer[i] == layer) return i;
  return kNoInvocation;
}

using PrefetchRegistry = Registry<PrefetchPolicy, const PrefetchSetup&>;
std::unique_ptr<PrefetchPolicy> make_prefetch_policy(const std::string& spec, const PrefetchSetup& setup);

}  // namespace moesim
