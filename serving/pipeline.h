// The serving pipeline (docs/architecture.md §1 and §9), written once for every platform and every system. It
// is event-driven over the whole run: a layer invocation starts when the previous one's layer work has ended
// (a layer needs the previous layer's output), while loads of later layers (prefetches) may still be in
// flight. For each step of the workload (a prefill pass or a decode token step) and each of its layer
// invocations, in order:
//
//   1. dense op          the layer's attention + router + shared experts; the router's output is what reveals
//                        the experts, so every load of this layer depends on it;
//   2. routing rewrite   RoutingPolicy::route on the invocation's tokens (core/routing.h; identity by
//                        default, which keeps the stream's lookups); the unique-expert lookups are derived
//                        from the rewritten tokens; what changed is counted (RoutingChange on lookups,
//                        RoutingDeviation on token selections), never silent. Oracle next-use of an expert
//                        the router did not ask for is "never" here (the replay follows the rewritten
//                        routing exactly, replay/routing_replay.h);
//   3. residency         each requested expert is looked up (core/residency.h): the answer is its state (F,
//   C,
//                        S, E, M) and, for F, the memory tier of its copy; a lookup whose expert is still
//                        being loaded by a prefetch waits for that load (counted: in_flight, late prefetch);
//                        with PipelineOptions::load_whole_layer (layer-offload) every expert of the layer is
//                        looked up and loaded, the routed ones also computed;
//   4. request builder   one DAG per requested expert tensor, shaped by its state and by the system's load
//                        layout (PipelineOptions::loads, serving/load_layout.h), which the pipeline asks for
//                        each missing tensor's ops and knows nothing else of:
//                          F (device/unified)  -> expert compute
//                          F (host memory)     -> transfer -> expert compute (a discrete GPU's DRAM tier)
//                          anything else       -> the layout's load to F -> expert compute
//                                                 (whole tensors: SSD read -> transfer; ZipMoE's split,
//                                                 serving/zipmoe_loads.h: chunk reads, decompressions,
//                                                 recovery)
//                        and one expert compute per routed expert joining its tensors. Recovery and expert
//                        compute run where the system puts them (PipelineOptions::recover_on/compute_on);
//   5. scheduler         SchedulingPolicy::order sets the request ops' priorities (FCFS: none);
//   6. prefetch          PrefetchPolicy::propose names experts of later layers; each one the residency admits
//                        (Residency::prefetch) gets a load (Op::prefetch, lowest urgency) that starts now:
//                        the layout's load to the state admitted (F, or parts that stay compressed);
//   7. platform          ops are submitted as their dependencies complete. The invocation's layer work (all
//                        its ops but prefetches) ending starts the next invocation.
//
// Memory: the residency's admissions, demotions, promotions and evictions are forwarded to the platform
// (Platform::memory_event) and tracked here: bytes in use per pool over time (timeline counters) and
// their peaks (PipelineResult::pools).
//
// Times: a step starts when the previous step's last layer ends; TTFT is a prefill step's duration, TPOT a
// decode step's (service times: requests are assumed to be waiting when their step starts); a sequence's
// latencies are read from the steps it spans (serving/metrics.h).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/compression_state.h"
#include "core/counters.h"
#include "core/eviction.h"
#include "core/invocation_walker.h"
#include "core/op_graph.h"
#include "core/platform.h"
#include "core/prefetch.h"
#include "core/residency.h"
#include "core/routing.h"
#include "core/routing_metrics.h"
#include "core/scheduling.h"
#include "core/workload.h"
#include "serving/load_layout.h"

namespace moesim {

// What the ops of one layer move and compute (built from a ModelSpec and/or the trace's expert sizes).
struct ModelCosts {
  std::vector<uint64_t> expert_bytes;     // [layers] one routed expert, all its tensors
  std::vector<std::string> tensor_names;  // the tensors of an expert: one DAG each
  std::vector<double> tensor_share;       // their share of the expert's elements (sums to 1)
  double expert_flops_per_token = 0;      // 2 * elements of one expert
  std::vector<uint64_t> dense_bytes;      // [layers] non-routed weights read per invocation
  double dense_flops_per_token = 0;       // 2 * non-routed elements per layer
  // [layers] one routed expert's elements by storage type name, where the model says its types (--model);
  // empty when the sizes come from a trace, whose file's types the run does not know.
  std::vector<std::vector<std::pair<std::string, uint64_t>>> expert_storage;
  // Bytes of tensor t of an expert of `layer` (shares rounded; the last tensor takes the remainder).
  uint64_t tensor_bytes(uint32_t layer, uint32_t t) const;
};

struct PipelineOptions {
  // How the system's tensors are loaded (System::build sets it); null: whole tensors
  // (whole_tensor_loads()).
  std::shared_ptr<const LoadLayout> loads;
  ResourceClass recover_on = ResourceClass::kGpu;  // where tensor recovery runs (kGpu or kCpu)
  ResourceClass compute_on = ResourceClass::kGpu;  // where routed experts compute (kGpu or kCpu)
  bool load_whole_layer = false;  // layer-offload: every expert of a layer is loaded when it runs
  // Every routed expert of a layer computes only once all the layer's loads have ended (its reads overlap one
  // another, not the compute of its resident experts): an engine that loads a layer's misses before it
  // computes any of its experts. With experts computed on the CPU, each read tensor is then copied into its
  // cache slot on a CPU worker as it arrives (a transfer op on kCpu), while the layer's other reads go on.
  // Not with prefetching (a hit on an expert still loading is not waited for).
  bool compute_after_loads = false;
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
  // Pools: Residency::pools()' names ("full-tensor pool" for a classic cache; "F", "C", "S", "E" for
  // ZipMoE's pools; "F@device", "F@host" for a two-tier cache). Queues: Platform::queue_names() (the pools
  // of core/op_graph.h's resource vocabulary: "io_thread", "ssd", "cpu_workers", "gpu", "link").
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

// Lookups by the state they found (indexed by ExpertState), all and decode-only.
struct StateCounts {
  std::array<uint64_t, 5> lookups{};
  std::array<uint64_t, 5> decode_lookups{};
  uint64_t host_hits = 0;  // F found in host memory (a discrete GPU's DRAM tier): a transfer, no SSD read
  uint64_t in_flight = 0;  // lookups that waited for a load still running (a prefetch)
  // Misses (state M) of an expert never loaded before in the run: the cost of starting cold, which no
  // cache of any size avoids (a planner profiled offline expects none of them).
  uint64_t cold_misses = 0, decode_cold_misses = 0;
};

// One residency pool over the run (from the memory events).
struct PoolUsage {
  PoolInfo info;
  uint64_t peak_bytes = 0;   // the most bytes in use after any invocation's or prefetch's admissions and
                             // evictions (transient pass-throughs inside one invocation are not counted)
  uint64_t final_bytes = 0;  // in use at the end
  uint64_t admits = 0, evicts = 0;
  uint64_t demotes = 0, promotes = 0;  // experts that left this pool for a lower / higher one
};

// One sequence's span of the run, in step indices (WorkloadView::seq_first_step, seq_last_step).
struct SequenceSteps {
  uint32_t first = 0, last = 0;
};

struct PipelineResult {
  std::vector<StepTiming> steps;
  std::vector<SequenceSteps> sequences;  // in trace order; empty when the workload names no sequences
  std::vector<InvocationTiming> invocations;
  CacheCounters cache;
  RoutingChange routing;
  RoutingDeviation deviation;              // token selections the routing policy changed (identity: none)
  Json routing_counters = Json::object();  // RoutingPolicy::counters() at the end
  LifetimeStats lifetime;  // residencies in tokens (core/routing_metrics.h), from memory events
  std::vector<ResourceStats> resources;
  StateCounts states;
  PrefetchCounters prefetch;
  std::vector<PoolUsage> pools;
  uint64_t memory_peak = 0;  // the most bytes all pools held together (measured like PoolUsage::peak_bytes)
  uint64_t ops = 0;
  uint64_t ssd_bytes = 0;
  std::array<uint64_t, 3> ssd_bytes_by_part{};  // indexed by TensorPart: whole tensors, SM-chunks, E-chunks
  double makespan = 0;
  // When PipelineOptions::record_timeline, for the steps of the window only (the window is copied here so
  // that the writer can select the step and layer markers from steps/invocations):
  std::vector<TimelineEvent> timeline;         // every op, in completion order
  std::vector<CounterTrack> counter_tracks;    // pools first, then the platform's queues
  std::vector<CounterSample> counter_samples;  // in time order
  uint32_t timeline_first_step = 0, timeline_last_step = UINT32_MAX;
};

// Counters (with record_timeline): the bytes in use of every residency pool follow its memory events; queue
// lengths come from the platform (Platform::set_queue_observer) as they change.
class Pipeline : private OpSink, private ResidencyView, private QueueObserver, private MemoryListener {
 public:
  // `prefetch` may be null (no prefetching).
  Pipeline(const ModelCosts& costs, const PipelineOptions& opt, Residency& residency, RoutingPolicy& routing,
           SchedulingPolicy& scheduling, PrefetchPolicy* prefetch = nullptr);
  ~Pipeline() override;
  // Runs the whole workload on `platform` (times start at its now()). Run again on the same residency (a warm
  // start, SystemConfig::warm_stream), the pools' bytes carry over from the run before.
  PipelineResult run(const WorkloadView& w, Platform& platform);

 private:
  struct Invocation;  // one layer invocation's graph and bookkeeping (a reusable slot)
  void op_done(uint32_t token, const OpTiming& timing) override;
  void queue_length(uint32_t queue, uint64_t waiting) override;
  void memory_event(const MemoryEvent& e) override;
  ExpertState state(uint32_t layer, uint32_t expert) const override;
  void set_counter(uint32_t track, uint64_t value);
  void start_counters(Platform& platform);
  void enter_window();
  void note_peaks();
  void start_step(uint32_t s);
  void start_invocation(uint32_t inv);
  // The parts of start_invocation, in order:
  uint32_t add_dense_op(Invocation& v, bool decode);  // returns its op index
  // The invocation's expert demands (demands_, original_), rewritten by a non-identity router.
  void collect_demands(uint32_t inv, uint32_t layer, bool decode);
  // Counts the router's rewrite, adds the layer's other experts under load_whole_layer, clears kept_.
  void finish_demands();
  void walk_lookups(Invocation& v, bool decode, uint32_t dense_op);  // looks up demands_, building requests
  // Issues a proposed prefetch, or counts why not.
  void consider_prefetch(Invocation& v, uint32_t slot, const PrefetchRequest& pr);
  void submit_invocation(Invocation& v, uint32_t slot);  // finalizes the graph, submits its ready ops
  void finish_layer(Invocation& v);
  uint32_t acquire_slot();
  void build_request(Invocation& v, uint32_t layer, uint16_t expert, uint32_t tokens, LookupResult found,
                     uint32_t dense);
  // build_request for a routed expert behind the dense op (computed, not after the layer's loads): its whole
  // fragment, loads and compute, appended from a template built once per (layer, state, host copy, phase).
  void add_request(Invocation& v, uint32_t layer, uint16_t expert, uint32_t tokens, LookupResult found,
                   uint32_t dense);
  void build_prefetch(Invocation& v, uint32_t layer, uint16_t expert, ExpertState from, ExpertState to);
  // A tensor load of the expert `base` names, with the run's placement options.
  TensorLoad tensor_load(const Op& base, ExpertState from, ExpertState to,
                         std::span<const uint32_t> roots) const;
  void wait_for_inflight(Invocation& v, uint32_t key, uint32_t first_op, uint32_t dense);
  void submit(std::vector<uint32_t>& ready);

  const ModelCosts& costs_;
  PipelineOptions opt_;
  Residency& residency_;
  RoutingPolicy& routing_;
  SchedulingPolicy& scheduling_;
  PrefetchPolicy* prefetch_;
  const LoadLayout* loads_;  // opt_.loads or whole_tensor_loads()
  const WorkloadView* w_ = nullptr;
  Platform* platform_ = nullptr;
  PipelineResult* result_ = nullptr;
  uint32_t experts_ = 0;
  uint32_t step_ = 0;
  uint64_t run_id_ = 0;  // ScheduleContext::run of this run's invocations
  StepTiming step_timing_;
  bool finished_ = false;
  std::vector<std::unique_ptr<Invocation>> slots_;
  std::vector<uint32_t> free_slots_;
  bool prefetch_backlog_warned_ = false;  // the warning about a backlog of prefetch loads, once per run
  // Loads in flight per key: the tokens of their last ops (a lookup of the key waits for all of them).
  std::unordered_map<uint32_t, std::vector<uint32_t>> inflight_;
  // Prefetch bookkeeping per key: 1 = prefetched and not looked up since; the bytes its load read.
  std::vector<uint8_t> prefetched_;
  std::vector<uint8_t> loaded_;  // by key: the expert was loaded (looked up or prefetched) before
  std::vector<uint64_t> prefetch_bytes_;
  std::vector<uint32_t> prefetch_target_;  // the invocation a prefetch was for
  // Scratch.
  std::vector<ExpertDemand> demands_, original_;
  std::vector<uint16_t> route_out_;
  std::vector<uint32_t> route_pos_;
  // The loads of every tensor of one expert as the system's layout builds them, per (layer, from, to,
  // prefill): built once per run, then appended per request with the expert's label instead of built again
  // per token (serving/pipeline.cpp).
  struct LoadTemplates;
  std::unique_ptr<LoadTemplates> templates_;
  // What a routed expert found in `found` needs before its compute, behind `root`: its loads to full weights,
  // or a host copy's transfer to a discrete GPU; the chains' ends replace tails_ (empty: none needed).
  void add_expert_loads(OpGraph& g, uint32_t layer, uint16_t expert, LookupResult found, bool prefill,
                        std::span<const uint32_t> root);
  // A routed expert's compute op for `tokens` tokens; fresh when tails_ (add_expert_loads) holds loads.
  Op expert_compute(uint32_t layer, uint16_t expert, bool prefill, uint32_t tokens) const;
  // Appends the loads of `expert` from `from` to `to` behind `roots`; their tails go to tails_.
  void add_loads(OpGraph& g, uint32_t layer, uint16_t expert, ExpertState from, ExpertState to, bool prefill,
                 std::span<const uint32_t> roots);
  // Lifetimes: the token clock of the current step, and bytes held per key over all pools.
  uint64_t clock_ = 0, next_clock_ = 0;
  std::vector<uint64_t> held_;
  LifetimeTracker lifetimes_;
  std::vector<uint8_t> kept_;
  InvocationWalker walker_;  // the lookups, refreshes and eviction of each invocation
  std::vector<uint32_t> tails_, ready_;
  // submit()'s scratch: the ready set sorted by (priority, token), and as handed to the platform.
  struct Keyed {
    int64_t priority;
    uint32_t token;
    const Op* op;
  };
  std::vector<Keyed> keyed_;
  std::vector<ReadyOp> ready_ops_;
  // PipelineOptions::compute_after_loads: the layer's loads so far, and the compute ops held back until the
  // last lookup (request index, op).
  std::vector<uint32_t> layer_loads_;
  std::vector<std::pair<uint32_t, Op>> deferred_;
  void add_deferred_computes(Invocation& v, uint32_t dense_op);
  std::vector<PrefetchRequest> proposals_;
  std::vector<uint64_t> pool_bytes_;
  // Counters: the current value of every track, and the index of its last sample in the window.
  struct CounterState {
    uint64_t value = 0;
    size_t last = SIZE_MAX;
  };
  std::vector<CounterState> counters_;
  bool record_counters_ = false;
  bool in_window_ = false;
  uint32_t first_queue_track_ = 0;
};

}  // namespace moesim
