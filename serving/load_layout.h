// How a system's expert tensors are stored and brought into memory: the ops of one tensor's load. The
// pipeline (serving/pipeline.h) builds every miss's and every prefetch's load through the layout its system
// gives it (PipelineOptions::loads) and knows no layout itself: a system with its own storage format
// (ZipMoE's split tensors, serving/zipmoe_loads.h) is its layout and its system file, nothing in the
// pipeline.
//
// A layout appends ops to the invocation's graph; the pipeline adds around them what every system shares:
// the expert compute that waits for the tensors' tails, the copy of a host-memory tier's full tensor, the
// prefetch marking, the waits on loads still in flight, the SSD byte counters (by Op::part and
// Op::read_bytes).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/compression_state.h"
#include "core/op_graph.h"
#include "core/platform.h"

namespace moesim {

// One tensor of one expert to load.
struct TensorLoad {
  Op base;                                  // layer, expert, tensor and prefill set; the rest default
  uint64_t bytes = 0;                       // the tensor's bytes in memory (ModelCosts::tensor_bytes)
  ExpertState from = ExpertState::kMissed;  // what the cache holds of it: never kFull
  ExpertState to = ExpertState::kFull;      // kFull: computable; C, S or E: a prefetch that keeps parts
  std::span<const uint32_t> roots;          // what the load's first ops wait for (none: it starts now)
  ResourceClass recover_on = ResourceClass::kGpu;  // PipelineOptions::recover_on
  ResourceClass compute_on = ResourceClass::kGpu;  // PipelineOptions::compute_on
  bool compute_after_loads = false;                // PipelineOptions::compute_after_loads
};

class LoadLayout {
 public:
  virtual ~LoadLayout() = default;
  // Appends the ops that bring `load` from `from` to `to` to `g` (each op's first dependencies are
  // load.roots) and, for to == kFull, the ops whose end makes the tensor computable to `tails` (none: the
  // tensor needs no op). Throws moesim::Error for a state the layout cannot hold. The ops may depend on
  // load.base.expert only by copying it: the pipeline builds a layer's loads once per (from, to, phase) and
  // appends them for each expert with its label (serving/pipeline.h, LoadTemplate).
  virtual void add_load(const TensorLoad& load, OpGraph& g, std::vector<uint32_t>& tails) const = 0;
  // K, the parts a tensor's load is cut into that may run in parallel (ScheduleContext::shards).
  virtual uint32_t shards() const { return 1; }
};

// Whole tensors, the classic systems' layout: a miss is one SSD read of each tensor, then its copy to the
// GPU where experts compute there (a CPU-computed tensor is used where it was read, or, with
// compute_after_loads, copied into its cache slot on a CPU worker). It holds no partial states.
const LoadLayout& whole_tensor_loads();

}  // namespace moesim
