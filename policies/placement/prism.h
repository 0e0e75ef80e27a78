// The two stages of Prism's placement (Prism: Accelerating Edge Inference for Distributed MoE Models with
// Latency-Optimized Expert Placement, §III-C), exposed for tests; the registered policy is in prism.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/placement.h"
#include "policies/placement/placement_util.h"

namespace moesim::placement {

// v_{n,l}: the Shannon entropy (bits) of server n's activation shares over layer l's experts; 0 without load.
double activation_entropy(const std::vector<double>& load_n, uint32_t layer, uint32_t experts);

// Alg. 1 with the repairs docs/placement.md lists: N_{n,l}, [server][layer], sum_n N_{n,l} >= E for every l.
// Records each server's slots per GPU in `gpus`. Throws moesim::Error when the rebalancing cannot cover a
// layer (only with experts of several sizes; check_coverable has passed before).
std::vector<std::vector<uint32_t>> prism_counts(const PlacementInput& in, GpuTable& gpus);

// Alg. 2: held[n][key], exactly counts[n][l] experts of layer l on server n. cover = false stops after line 3
// (each server's top-N_{n,l} by f_n^l), before the coverage loop.
std::vector<std::vector<bool>> prism_assign(const PlacementInput& in, const std::vector<std::vector<uint32_t>>& counts,
                                            bool cover = true);

}  // namespace moesim::placement
