// What the ops of a run move and compute: the sizes of experts and dense weights, the tensor split and the
// FLOPs, and where each number came from. The non-expert (dense) weights -- attention, router, shared
// experts -- are assumed resident in memory for the whole run (they are not charged to the budget and never
// read from the SSD), which is how llama.cpp-style offloading and ZipMoE's baselines keep them.
//
// Sizes (which bytes an expert has) -- model_costs():
//   * with a model (--model): the model preset's sizes: bytes_per_expert() in its dtype, its dense bytes,
//     its FLOPs. A what-if: "this routing on that model's weights".
//   * without: the trace's own per-layer expert_bytes (the file the recording engine actually ran, e.g.
//     the Q4_K_M GGUF of the bundled traces), dense bytes from the trace's provenance when recorded there,
//     otherwise the preset's dense bytes scaled by the same quantization ratio (trace expert bytes /
//     preset expert bytes); FLOPs and the tensor split from the preset the trace's model name starts with
//     (element counts do not depend on quantization). Without such a preset the run needs --model.
// The chosen rule is written into the run's configuration ("sizes").
#pragma once

#include <optional>
#include <string>

#include "base/json_io.h"
#include "core/model_spec.h"
#include "serving/pipeline.h"
#include "traces/trace.h"

namespace moesim::serving {

// The model's costs (expert and dense sizes, FLOPs) with, in `sizes`, where every number came from.
struct SourcedCosts {
  ModelCosts costs;
  Json sizes;  // where every number came from
};

SourcedCosts model_costs(const traces::TraceInfo& info, const std::optional<ModelSpec>& model);

}  // namespace moesim::serving
