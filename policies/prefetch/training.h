// What the learned prefetch predictors (transition, popularity) learn from a training trace: per-layer expert
// frequencies and cross-layer transition counts. Trained on one trace, evaluated on another: the run's own
// trace is never read by them, so their proposals use no future information of the evaluated run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace moesim::policies {

struct PrefetchTraining {
  uint32_t layers = 0, experts = 0;
  std::string source;
  std::vector<uint64_t> freq;        // [layer * experts + e]: tokens that picked e at layer
  std::vector<uint32_t> transition;  // [(layer * experts + i) * experts + j]: tokens that picked i at layer and j at layer + 1
};

// Loads `path` (any trace format moesim reads) and counts. Throws moesim::Error naming the file when it
// cannot be read or its shape differs from the run's (`layers` x `experts`).
PrefetchTraining train_prefetch(const std::string& path, uint32_t layers, uint32_t experts);

}  // namespace moesim::policies
