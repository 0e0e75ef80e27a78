// Scheduling policies (docs/architecture.md §3): order the operations of one layer invocation on the
// resources. FCFS (policies/scheduling/fcfs.cpp) leaves every priority at 0, so each resource serves ops
// in the order they became ready; ZipMoE's cache-affinity scheduler (ZipMoE §3.3,
// Alg. 1) partitions requests into Type-I (SM-chunks to read) and Type-II tasks, builds blocks and gives
// the ops of earlier blocks lower priorities (the I/O thread and workers then take "the first available
// operation in priority order", Appendix A).
//
// The pipeline calls order() after building the invocation's graph and before submitting any op; the
// policy may only change Op::priority (lower runs first; ties keep submission order) of the requests'
// ops [first_op, compute_op]. The graph may also hold prefetch loads (Op::prefetch), which the pipeline
// gives the lowest urgency itself.
//
// Graph shape of one request (serving/pipeline.h): for each tensor t of the expert, ops with Op::tensor == t:
// E-chunk reads (part kE, one per shard, when the state needs them), decompressions (kE, one per shard),
// the SM-chunk read (kSm), a transfer and a recovery; then one expert compute joining the tensors. A
// full-tensor request has one read (kWhole) and a transfer per tensor; an F request only its compute.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/compression_state.h"
#include "core/op_graph.h"
#include "core/platform.h"
#include "core/registry.h"

namespace moesim {

// ExpertRequest::shape of a request whose ops are not known to repeat another's.
inline constexpr uint32_t kNoShape = UINT32_MAX;

// One requested expert of the invocation and where its ops are in the graph.
struct ExpertRequest {
  uint16_t expert = 0;
  uint32_t tokens = 0;
  ExpertState state = ExpertState::kMissed;
  uint32_t first_op = 0;    // its ops are [first_op, compute_op] in the graph
  uint32_t compute_op = 0;  // the expert compute op
  // Requests of one run (ScheduleContext::run) with the same shape have the same ops, dependencies (relative
  // to first_op) and fields but for the expert label and the compute's tokens and FLOPs: a policy may keep
  // what it derived from one (the tasks, their estimates: OpEstimator's contract) for the others. The
  // pipeline's request templates (serving/pipeline.h); kNoShape: no such promise.
  uint32_t shape = kNoShape;
};

struct ScheduleContext {
  uint32_t layer = 0;
  bool decode = false;
  uint32_t dense_op = 0;  // the layer's dense/attention op (the root)
  // Expected op durations ("offline-profiled delays", ZipMoE Appendix A): the platform's estimator.
  const OpEstimator* estimator = nullptr;
  uint32_t cpu_workers = 1;  // L: decompression threads
  uint32_t shards = 1;       // K: E-chunk shards per tensor
  // The pipeline run whose shapes ExpertRequest::shape names, unique in the process (0: none; shapes are
  // then ignored). A new run may reuse a shape number for other ops.
  uint64_t run = 0;
};

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  virtual void order(const ScheduleContext& ctx, std::span<const ExpertRequest> requests, OpGraph& graph) = 0;
};

using SchedulingRegistry = Registry<SchedulingPolicy>;
std::unique_ptr<SchedulingPolicy> make_scheduling_policy(const std::string& spec);

}  // namespace moesim
