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
  bool record_timeline = false;  // keep every op's timing and the counters (for --timeline)
  // With record_timeline: only steps first..last (inclusive, workload step indices) are recorded; ops,
  // counter samples and markers of other steps are not kept.
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
  uint32_t step = 0;  // workload step index
  double start = 0, end = 0;
};

struct TimelineEvent {
  Op op;
  OpTiming timing;
  uint32_t step = 0;
};

// A counter track of a timeline: the bytes in use of one memory pool of the expert cache, or the ops
// waiting for a unit of one platform resource.
struct CounterTrack {
  enum class Kind : uint8_t { kPoolBytes, kQueueLength };
  Kind kind = Kind::kPoolBytes;
  // Pools: the pool's name ("full-tensor pool": ExpertCache's one pool; a split layout would add one per
  // compression state). Queues: Platform::queue_names() ("io_thread", "ssd", "cpu_workers", "gpu", "link").
  std::string name;
};

// The value of a counter track from `time` on. Samples are recorded only when the value changes, plus
// one per track at the start of the recorded window; per track, times never decrease.
struct CounterSample {
  double time = 0;
  uint32_t track = 0;  // index into PipelineResult::counter_tracks
  uint64_t value = 0;  // bytes, or ops waiting
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
  // When PipelineOptions::record_timeline, for the steps of the window only (the window is copied here so
  // that the writer can select the step and layer markers from steps/invocations):
  std::vector<TimelineEvent> timeline;         // every op, in completion order
  std::vector<CounterTrack> counter_tracks;    // pools first, then the platform's queues
  std::vector<CounterSample> counter_samples;  // in time order
  uint32_t timeline_first_step = 0, timeline_last_step = UINT32_MAX;
};

// Counters (with record_timeline): the pool's bytes in use follow the cache's admissions and evictions,
// sampled once per invocation at its start (the cache decides everything there, ARCHITECTURE.md §4; bytes
// of experts that pass through an over-full cache are not counted); queue lengths come from the platform
// (Platform::set_queue_observer) as they change.
class Pipeline : private OpSink, private ResidencyView, private QueueObserver {
 public:
  Pipeline(const ModelCosts& costs, const PipelineOptions& opt, ExpertCache& cache, RoutingPolicy& routing,
           SchedulingPolicy& scheduling);
  // Runs the whole workload on `platform` (a fresh one: times start at its now()).
  PipelineResult run(const WorkloadView& w, Platform& platform);

 private:
  void op_done(uint32_t token, const OpTiming& timing) override;
  void queue_length(uint32_t queue, uint64_t waiting) override;
  void set_counter(uint32_t track, uint64_t value);
  void start_counters(Platform& platform);
  void enter_window();
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
  // Counters: the current value of every track, and the index of its last sample in the window.
  struct CounterState {
    uint64_t value = 0;
    size_t last = SIZE_MAX;
  };
  std::vector<CounterState> counters_;
  bool in_window_ = false;
  uint32_t first_queue_track_ = 0;
  uint64_t pool_bytes_ = 0;
  std::vector<uint32_t> evicted_;
};

}  // namespace moesim
