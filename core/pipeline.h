// The serving pipeline (ARCHITECTURE.md §1), written once for every platform. For each step of the
// workload (a prefill pass or a decode token step) and each of its layer invocations, in order:
//
//   1. routing rewrite   RoutingPolicy::rewrite on the invocation's unique experts (identity by
//                        default); what it changed is counted (RoutingChange), never silent;
//   2. cache / pools     each requested expert is looked up in the ExpertCache (core/eviction.h, lookup
//                        semantics of ARCHITECTURE.md §4); its compression state follows (the
//                        full-tensor baseline: hit = F, miss = M); eviction runs after the admissions;
//   3. request builder   one op graph per invocation: the layer's dense op (attention + router + shared
//                        experts) first -- the router's output is what reveals the experts -- then one DAG
//                        per requested expert tensor, shaped by its state (ZipMoE §3.2, Fig. 6):
//                          F            -> expert compute
//                          M, full      -> SSD read -> transfer -> expert compute
//                          M, split     -> E-chunk shard reads -> decompress each, SM read
//                                          -> transfer -> recover -> expert compute
//                          C / S / E    -> the split DAG without the reads of what is cached
//                        and one expert compute per expert that joins its tensors;
//   4. scheduler         SchedulingPolicy::order sets op priorities (FCFS: none);
//   5. platform          ops are submitted as their dependencies complete; the invocation ends when its
//                        last op ends, and the next invocation starts then (a layer needs the previous
//                        layer's output; nothing is prefetched across layers in this pipeline).
//
// Times: a step starts when the previous one ends; TTFT is a prefill step's duration, TPOT a decode
// step's (service times: requests are assumed to be waiting when their step starts).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/compression_state.h"
#include "core/eviction.h"
#include "core/op_graph.h"
#include "core/platform.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "core/workload.h"

namespace moesim {

// What the ops of one layer move and compute (built from a ModelSpec and/or the trace's expert sizes).
struct ModelCosts {
  std::vector<uint64_t> expert_bytes;     // [layers] one routed expert, all its tensors
  std::vector<std::string> tensor_names;  // the tensors of an expert: one DAG each
  std::vector<double> tensor_share;       // their share of the expert's elements (sums to 1)
  double expert_flops_per_token = 0;      // 2 * elements of one expert
  std::vector<uint64_t> dense_bytes;      // [layers] non-routed weights read per invocation
  double dense_flops_per_token = 0;       // 2 * non-routed elements per layer
  // Bytes of tensor t of an expert of `layer` (shares rounded; the last tensor takes the remainder).
  uint64_t tensor_bytes(uint32_t layer, uint32_t t) const;
};

struct PipelineOptions {
  TensorLayout layout;           // full tensors (the offloading baseline) or ZipMoE's split
  bool record_timeline = false;  // keep every op's timing (for --timeline)
  // With record_timeline: only steps first..last (inclusive, workload step indices) are recorded.
  uint32_t timeline_first_step = 0;
  uint32_t timeline_last_step = UINT32_MAX;
  // Called after every step with (steps done, steps in the workload): progress bars. May be empty.
  std::function<void(uint64_t, uint64_t)> on_step;
};

struct StepTiming {
  uint8_t phase = 0;  // 0 prefill, 1 decode
  uint32_t tokens = 0;
  double start = 0, end = 0;
};

struct InvocationTiming {
  uint16_t layer = 0;
  uint8_t phase = 0;
  double start = 0, end = 0;
};

struct TimelineEvent {
  Op op;
  OpTiming timing;
  uint32_t step = 0;
};

struct RoutingChange {
  uint64_t lookups = 0;          // unique experts the router asked for
  uint64_t changed_lookups = 0;  // of those, replaced or dropped by the rewrite
  uint64_t changed_tokens = 0;   // tokens they carried
};

struct PipelineResult {
  std::vector<StepTiming> steps;
  std::vector<InvocationTiming> invocations;
  CacheCounters cache;
  RoutingChange routing;
  std::vector<ResourceStats> resources;
  uint64_t ops = 0;
  uint64_t ssd_bytes = 0;
  double makespan = 0;
  std::vector<TimelineEvent> timeline;  // when PipelineOptions::record_timeline
};

class Pipeline : private OpSink, private ResidencyView {
 public:
  Pipeline(const ModelCosts& costs, const PipelineOptions& opt, ExpertCache& cache, RoutingPolicy& routing,
           SchedulingPolicy& scheduling);
  // Runs the whole workload on `platform` (a fresh one: times start at its now()).
  PipelineResult run(const WorkloadView& w, Platform& platform);

 private:
  void op_done(uint32_t token, const OpTiming& timing) override;
  ExpertState state(uint32_t layer, uint32_t expert) const override;
  void build_expert(uint32_t layer, const ExpertDemand& d, ExpertState st, uint32_t dense);
  void run_graph(Platform& platform);
  void submit_ready(std::vector<uint32_t>& ready);

  const ModelCosts& costs_;
  PipelineOptions opt_;
  ExpertCache& cache_;
  RoutingPolicy& routing_;
  SchedulingPolicy& scheduling_;
  uint32_t experts_ = 0;
  // Per-invocation state.
  OpGraph graph_;
  std::vector<ExpertRequest> requests_;
  std::vector<uint32_t> remaining_deps_, ready_, tensor_tails_;
  Platform* platform_ = nullptr;
  double graph_end_ = 0;
  uint32_t step_ = 0;
  PipelineResult* result_ = nullptr;
};

}  // namespace moesim
