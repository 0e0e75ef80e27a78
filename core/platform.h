// The Platform interface (docs/architecture.md §1): what the serving pipeline needs from a machine, simulated
// (sim/sim_platform.h, simulated time) or real (exec/, wall-clock time). The pipeline hands it ops whose
// dependencies are complete; the platform runs each on a unit of the op's resource class (queueing by
// Op::priority, then submission order) and reports start and end through the sink.
//
// Contract: submit() never calls the sink synchronously (completion is reported from inside
// run_until_idle()); the sink may submit further ops from op_done(). run_until_idle() returns when no
// submitted op is left. Times are seconds since the platform was created. A token names one op in flight:
// no two ops submitted and not yet reported share one (the simulator runs the op under it, with no record of
// its own per op).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "core/residency.h"

namespace moesim {

// A runtime cost's distribution as kRuntimeQuantiles equally likely values: the (k + 0.5) / kRuntimeQuantiles
// quantiles of `samples` (nearest rank), ascending; empty for no samples. exec measures them (hand-offs,
// wake-ups), calibrate writes them into a profile, and the simulator draws from them (sim/sim_platform.h).
inline constexpr size_t kRuntimeQuantiles = 20;
std::vector<double> runtime_quantiles(std::vector<double> samples);

struct OpTiming {
  double start = 0;
  double end = 0;
  uint32_t unit = 0;      // which server of the resource ran it (SSD slot, CPU worker, GPU stream)
  double submitted = -1;  // when the op was handed to the platform (< 0: not recorded)
  // A real run's hand-off: start - submitted of an op that found a unit of its resource idle (< 0: it queued
  // behind a busy unit, or not recorded).
  double handoff = -1;
  // And its turnaround: start - the end of the op before it on its unit, when it was waiting for the unit.
  double turnaround = -1;
  // A real run's CPU time of the thread that ran the op, over its span (CLOCK_THREAD_CPUTIME_ID; < 0: not
  // recorded). An SSD read's is the I/O thread's own work (the kernel's O_DIRECT path, checksums, merging),
  // which the other CPU-bound threads wait for where cores are few (sim/cpu_cores.h; its size is measured in
  // bench/results/validate.md, "the I/O thread's CPU work").
  double cpu = -1;
};

class OpSink {
 public:
  virtual ~OpSink() = default;
  virtual void op_done(uint32_t token, const OpTiming& timing) = 0;
};

// Busy time of one resource: for a pool of `units` servers, busy_time sums over the servers, so
// utilization = busy_time / (units * makespan).
struct ResourceStats {
  std::string name;  // a pool: resource_pool_name (core/op_graph.h) or kIoThreadPool
  uint32_t units = 1;
  double busy_time = 0;
  uint64_t ops = 0;
  uint64_t bytes = 0;
};

// Sees the length of the platform's waiting lines (ops submitted to a resource that wait for a free unit)
// change: the queue-length counters of timelines (serving/timeline.h). Called from inside the platform, at
// its now(), after each operation that may change a length (the same length may be reported again).
class QueueObserver {
 public:
  virtual ~QueueObserver() = default;
  virtual void queue_length(uint32_t queue, uint64_t waiting) = 0;  // queue: index into queue_names()
};

// Expected duration of an op on an idle unit of its resource (seconds): the "offline-profiled delays"
// that planners and schedulers reason with (ZipMoE §3.3-3.4). SimPlatform answers from its cost model,
// exec from its calibrated profile. An estimate is a function of the op's fields other than its expert
// label, priority and prefetch flag, fixed for the estimator's lifetime (not of time or load): a scheduler
// may keep the answers for ops of one request shape (core/scheduling.h, ExpertRequest::shape) across a run.
class OpEstimator {
 public:
  virtual ~OpEstimator() = default;
  virtual double estimate(const Op& op) const = 0;
};

// The pipeline's work to plan one layer invocation's graph, as a real run measured it (exec): `head` up to
// the graph's first submission (its ops wait for it), `tail` after it (the pipeline thread stays busy).
struct PlanningTime {
  uint32_t ops = 0;
  double head = 0, tail = 0;
};

// One op handed over in a ready set (Platform::submit_ready): the op, valid during the call, and its token.
struct ReadyOp {
  const Op* op;
  uint32_t token;
};

class Platform : public OpEstimator {
 public:
  virtual ~Platform() = default;
  virtual double now() const = 0;
  // Queues `op` on its resource; sink->op_done(token, timing) reports its completion.
  virtual void submit(const Op& op, OpSink* sink, uint32_t token) = 0;
  // Queues the ops that became ready together, in the order given (the pipeline's priority order): the same
  // as submit() on each in turn, in one call (the simulator's per-op hand-off without a virtual call each).
  virtual void submit_ready(std::span<const ReadyOp> ready, OpSink* sink) {
    for (const ReadyOp& r : ready) submit(*r.op, sink, r.token);
  }
  virtual void run_until_idle() = 0;
  virtual std::vector<ResourceStats> resource_stats() const = 0;
  // A short description of the platform for run headers ("sim: jetson-agx-orin-64gb").
  virtual std::string describe() const = 0;
  // The platform's waiting lines, named like ResourceStats ("io_thread", "ssd", ...), and the observer
  // told about their lengths (nullptr: none). A platform without queues to report keeps the defaults.
  virtual std::vector<std::string> queue_names() const { return {}; }
  virtual void set_queue_observer(QueueObserver* observer) { (void)observer; }
  // Admissions, demotions, promotions and evictions of the serving system's pools (core/residency.h),
  // at now(): exec allocates and frees real buffers; the simulator keeps no buffers (the pipeline
  // records bytes in use per pool itself). `pools` is called once before the first event.
  virtual void memory_pools(const std::vector<PoolInfo>& pools) { (void)pools; }
  virtual void memory_event(const MemoryEvent& e) { (void)e; }
  // The ops of one layer invocation (its requests and prefetch loads), once its graph is final and before
  // any of them is submitted: exec counts, per expert, the ops still to run on its data, so that it frees a
  // buffer only when no planned op needs it any more. The graph stays valid until its last op is done.
  virtual void ops_planned(const OpGraph& graph) { (void)graph; }
  // The units of a resource class (CPU workers L, GPU streams, ...), for schedulers and planners.
  virtual uint32_t units(ResourceClass r) const = 0;
  // A warm start's measured pass begins (serving::SystemConfig::warm_stream): the platform's own event
  // counters (the simulator's page-cache hits and major faults) restart from zero; what it holds (the page
  // cache's contents) stays. resource_stats() keeps counting: the caller subtracts the warm pass's.
  virtual void restart_counters() {}
};

}  // namespace moesim
