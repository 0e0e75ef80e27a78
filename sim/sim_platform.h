// SimPlatform: the Platform interface (core/platform.h) in simulated time. Ops go to the resource of
// their class: SSD reads through the single I/O thread to the SSD model, decompressions to the pool of L
// CPU workers, recovery and compute to the GPU stream(s), transfers to the host-device link; durations
// come from CostModel. Deterministic: ties are broken by event sequence numbers, never by addresses.
// An op runs under its token as the resources' job id (no record of its own per op): the ops in flight at
// once report to one sink (the pipeline; a submission naming another while ops are in flight is an error).
//
// A fused read (Op::read_bytes, ZipMoE §4's prototype) is a decompression whose worker reads its E-chunk
// itself: it queues for a CPU worker like any decompression; the worker it takes submits the read straight to
// the SSD model (not through the I/O thread: it is one more request in flight at the device, sharing its
// bandwidth), holds the unit idle on the cores while the read is in service, then decompresses for the
// decompression's duration and releases the unit. Where the profile's device is no deeper than the I/O
// thread's queue (ssd.queue_depth <= io_depth: calibrate writes the depth exec's I/O thread ran with), the
// SSD model would queue the worker's read behind the I/O thread's, where the disk serves the threads side by
// side: the read is then the worker's own wait at the idle-SSD estimate (CostModel::estimate), beside the I/O
// thread's reads (bench/results/batch-transfer-2026-12-06d.md). Measured durations (`moesim validate`) replay
// a fused op as its two measured parts: its device time as a plain wait on the unit, then its CPU work on the
// cores (harness/exec_runner.h's op_work splits it by the worker's CPU clock; MeasuredDurations keeps the
// parts as seconds and cpu_tail). A fused read goes as the run's reads go (SimOptions::buffered_io): in a
// buffered run whose page cache holds the E-chunk it is a copy on the worker instead of an SSD request (the
// prototype's configuration is `zipmoe:io=fused --io buffered`). A read's CPU tail (ssd.read_cpu_*: the
// kernel's O_DIRECT path, the checksum) is the issuing thread's, so a fused read's worker runs it after the
// device and before decompressing; leaving it out underestimated the fused ops by half on a CPU machine and
// on a GPU one (bench/results/matrix-2026-11-28.md, run G; bench/results/gpu.md, fifth session).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/rng.h"
#include "core/cost_model.h"
#include "core/platform.h"
#include "sim/cpu_cores.h"
#include "sim/event_queue.h"
#include "sim/measured_durations.h"
#include "sim/page_cache.h"
#include "sim/resources.h"

namespace moesim::sim {

struct SimOptions {
  uint32_t io_depth = 1;  // reads the I/O thread keeps outstanding (1 = blocking reads, ZipMoE §3.3)
  // Reads through the OS page cache (`--io buffered`): a read whose bytes are resident there is a copy out of
  // DRAM (sim/page_cache.h) instead of an SSD request. page_cache_bytes: the DRAM the page cache may use
  // (page_cache_capacity()); 0 = nothing stays cached. Off: every read goes to the device (O_DIRECT,
  // io_uring).
  bool buffered_io = false;
  uint64_t page_cache_bytes = 0;
  // The dense weights mmapped (`--dense mmap`): pages of the model file in the same page cache, evictable.
  // Each dense op first touches its layer's dense weights there; a miss is a major fault that the computing
  // thread serves itself, reading them from the SSD (sim/page_cache.h, dense_fault_time) before it computes.
  // Off: the dense weights are pinned and never faulted.
  bool dense_mmap = false;
  uint32_t cpu_workers = 0;  // L; 0 = the profile's cpu.cores
  uint32_t gpu_streams = 1;
  uint32_t links = 1;
  // Durations measured on a real run (`moesim validate`): every op that has one holds its resource for
  // that long, SSD reads included (then served by `io_depth` plain servers instead of the SSD model);
  // the others fall back to the cost model. Not owned; must outlive the platform.
  MeasuredDurations* measured = nullptr;
  // And its planning calls (MeasuredDurations::add_planning) instead of the plan_* fits below.
  bool measured_planning = false;
  // And each op's own measured hand-off (MeasuredDurations::add's handoff) instead of the dispatch means
  // below, where the op found an idle unit in both runs.
  bool measured_handoff = false;
  // And each op's own measured turnaround (MeasuredDurations::add's turnaround) where it had waited for its
  // unit in the measured run, instead of the turnaround means.
  bool measured_turnaround = false;
  // The runtime's cost per dependency (seconds): an op given to an idle unit starts this long after it is
  // submitted (a real engine's thread hand-off: waking the thread; exec measures it the same way,
  // ExecCounters::handoff). An op that has to queue behind a busy unit pays the turnaround instead, when the
  // unit takes it. 0 = an ideal runtime.
  double dispatch_latency = 0;
  // Per resource class, where given (> 0): replaces dispatch_latency for that class's ops (an idle I/O thread
  // may wake slower than a worker: it sleeps in a blocking read's wait, and on a busy machine waits for a
  // core).
  double dispatch[kResourceClasses] = {};
  // Per resource class, where not empty: each hand-off to an idle unit is drawn from these equally likely
  // values (runtime_quantiles(), core/platform.h) instead of charged dispatch[]'s mean; the same for the
  // pipeline thread's wake-up (wake_q, instead of wake_latency). A cost that is not linear in them is then
  // right on average: a hand-off's distribution is skewed (a layer's last transfer is usually handed over
  // before the pipeline thread falls asleep, far below the mean), and charging the mean and then a wake-up
  // over-estimates TPOT (bench/results/validate.md, "hand-offs and wake-ups drawn from their measured
  // distributions"). Drawn from a stream seeded by `seed`, in the engine's (deterministic) event order.
  std::vector<double> dispatch_q[kResourceClasses];
  std::vector<double> wake_q;
  uint64_t seed = 1;
  // Every hand-off and wake-up at its mean (dispatch[], wake_latency) instead of drawn.
  void charge_means() {
    for (auto& q : dispatch_q) q.clear();
    wake_q.clear();
  }
  // The engine's pipeline thread, a serial resource: every completion holds it this long (waking it and
  // running the pipeline's op_done) before the pipeline sees it. 0 = completions are seen at once.
  double completion_latency = 0;
  // Added to a completion that finds the pipeline thread idle (asleep: waking it costs this much more).
  double wake_latency = 0;
  // Per resource class: the time a unit needs between two ops (reporting one, taking the next that was
  // waiting): a queued op starts this long after the unit it waited for frees (exec measures the same gap,
  // ExecCounters::turnaround). 0 = none.
  double turnaround[kResourceClasses] = {};
  // The pipeline's work to plan a layer invocation, per op planned, up to its first submission: the ops of a
  // graph are submitted that much later (ops_planned). 0 = planning is free.
  double plan_latency_per_op = 0;
  double plan_latency_fixed = 0;  // and per graph planned
  // The rest of the planning call (submitting, waking units, freeing buffers): the pipeline thread stays
  // busy that much longer after the graph's ops are submitted, so completions arriving meanwhile wait; the
  // ops themselves do not.
  double plan_tail_per_op = 0;
  double plan_tail_fixed = 0;
  // The cores that the engine's CPU-bound threads share (sim/cpu_cores.h): the L CPU workers, and the GPU
  // stream's thread as well when gpu_on_cpu (a machine without a GPU, where exec runs the GPU stream's ops
  // on a CPU thread). With more of them busy than cores, each runs at cores / busy of its speed; an op's
  // duration (cost model or measured) is its work alone on a core. 0 = a core per thread (no contention).
  uint32_t cpu_cores = 0;
  bool gpu_on_cpu = false;
  // The profile fields these options were read from (the runtime section's, "runtime.dispatch_latency"): a
  // run with them rests on each (core/profile_reads.h).
  std::vector<std::string> profile_fields;
  // Whether completions pass through the pipeline thread (a serial resource) before the pipeline sees them.
  bool serial_pipeline() const {
    return completion_latency > 0 || wake_latency > 0 || plan_latency_per_op > 0 || plan_latency_fixed > 0 ||
           plan_tail_per_op > 0 || plan_tail_fixed > 0 || measured_planning;
  }
};

class SimPlatform final : public Platform, private JobListener, private UnitWaiter {
 public:
  SimPlatform(const HardwareProfile& hw, const SimOptions& opt = {});
  double now() const override { return engine_.now(); }
  void submit(const Op& op, OpSink* sink, uint32_t token) override;
  void submit_ready(std::span<const ReadyOp> ready, OpSink* sink) override;
  void run_until_idle() override;
  // ssd, io_thread, cpu_workers, gpu, link (in that order).
  std::vector<ResourceStats> resource_stats() const override;
  std::string describe() const override;
  double estimate(const Op& op) const override;
  void ops_planned(const OpGraph& graph) override;
  uint32_t units(ResourceClass r) const override;
  void restart_counters() override {
    page_cache_.restart_counters();
    major_faults_ = decode_major_faults_ = fault_bytes_ = 0;
  }
  // io_thread (reads waiting to be issued), ssd (requests waiting for a slot), cpu_workers, gpu, link.
  std::vector<std::string> queue_names() const override;
  void set_queue_observer(QueueObserver* observer) override;

  // A buffered run (SimOptions::buffered_io): whether the read `op` finds its bytes in the page cache, which
  // then holds them as the most recently used (a miss puts them there: the read that fetches them fills it).
  // Every path that issues an SSD read asks this once per read; false, always, when reads bypass the cache.
  bool read_hits_page_cache(const Op& op);
  // A page-cache hit's time: a copy of op.bytes out of DRAM by the reading thread at
  // cpu.memcpy_bandwidth_per_core.
  double page_cache_read_time(const Op& op) const;
  const PageCache& page_cache() const { return page_cache_; }
  // `--dense mmap`: the time the dense op `op` waits for its layer's weights to be faulted back in (0 when
  // they are resident, or the dense weights are pinned); counts the faults.
  double dense_fault_time(const Op& op);
  // Major faults (read-around windows of kFaultAroundBytes) and bytes faulted in by dense ops so far; those
  // of decode steps alone (an engine log's per-token majflt counts the decode tokens').
  uint64_t major_faults() const { return major_faults_; }
  uint64_t decode_major_faults() const { return decode_major_faults_; }
  uint64_t fault_bytes() const { return fault_bytes_; }

  EventEngine& engine() { return engine_; }
  const CostModel& cost_model() const { return cost_; }
  // The routed experts' storage, for the cost model's dequantization term (CostModel::set_expert_storage).
  void set_expert_storage(CostModel::ExpertStorage storage) {
    cost_.set_expert_storage(std::move(storage));
    durations_.clear();  // an expert's compute time depends on its storage
  }
  // The profile's quantities this run read so far (core/profile_reads.h).
  HwReads reads() const;

 private:
  void job_done(uint32_t job, const OpTiming& timing) override;
  void job_done_serial(uint32_t job, const OpTiming& timing);  // job_done() through the pipeline thread
  // Fused reads: a worker took the op (its read starts), and its read is over (its decompression starts).
  void unit_taken(uint32_t job, uint32_t unit) override;
  void fused_read_done(uint32_t unit);
  void enqueue_fused(const Op& op, uint32_t job, double gap);
  struct Fused {
    uint32_t unit = 0;
    int64_t priority = 0;
    uint64_t bytes = 0;  // to read
    bool prefill = false;
    double wait = -1;      // the read's measured device time; < 0: the SSD model's
    double work = 0;       // the decompression's, on the worker
    double cached_s = -1;  // a page-cache hit's copy time (buffered runs); < 0: the read goes to the SSD
    bool reading = false;  // its read is at the SSD
    uint32_t job = 0;
  };
  // The fused ops waiting for a worker, by job (a job is a token: any 32-bit value). Open addressing (linear
  // probing, a multiplicative hash of the job), with deletion by backward shift: no allocation per fused op,
  // and a lookup of a few probes.
  class FusedTable {
   public:
    Fused& insert(uint32_t job);  // the job is not in the table
    Fused take(uint32_t job);     // removes the job's record (it is in the table) and returns it
    bool empty() const { return size_ == 0; }

   private:
    struct Entry {
      uint32_t job = 0;
      bool used = false;
      Fused f;
    };
    size_t home(uint32_t job) const { return static_cast<size_t>((job * 0x9E3779B97F4A7C15ull) >> shift_); }
    size_t slot(uint32_t job) const;  // the job's entry, or the free one where it would go
    void grow();
    std::vector<Entry> entries_ = std::vector<Entry>(64);
    uint32_t shift_ = 64 - 6;
    size_t size_ = 0;
  };
  FusedTable fused_;
  // Then each by the worker that took it, until its read is over. A fused read at the SSD is told from the
  // I/O thread's by this list (reading), not by a flag in its id; only while one is there is a completion
  // looked up.
  std::vector<Fused> by_unit_;
  uint32_t fused_reading_ = 0;
  // The SSD's listener: the I/O thread's reads go back to it, fused reads (by_unit_) to their worker.
  struct SsdListener : JobListener {
    SimPlatform* owner = nullptr;
    void job_done(uint32_t job, const OpTiming& timing) override;
  };
  SsdListener ssd_listener_{};
  double duration(const Op& op) const;  // measured, else the cost model
  // The cost model's estimate of an op, remembered by the fields it reads (kind, resource, layer, bytes,
  // FLOPs, tokens, prefill, fresh, a fused read's bytes): a run's ops repeat a few shapes (the same tensor of
  // the same layer), and the model's answer is a pure function of them (its profile reads, a function of the
  // same fields, are marked by the first ask). Direct-mapped: a collision replaces the entry, the answer is
  // the same either way.
  class DurationCache {
   public:
    // The estimate of `op`, asked of `cost` where it is not remembered.
    double get(const CostModel& cost, const Op& op) {
      const uint64_t shape = uint64_t{op.tokens} | (uint64_t{op.layer} << 32) |
                             (static_cast<uint64_t>(op.kind) << 48) |
                             (static_cast<uint64_t>(op.resource) << 52) | (uint64_t{op.prefill} << 56) |
                             (uint64_t{op.fresh} << 57) | (uint64_t{1} << 58);
      const uint64_t h = (op.bytes ^ shape ^ (op.read_bytes << 20)) * 0x9E3779B97F4A7C15ull;
      Entry& e = entries_[static_cast<size_t>(h >> (64 - kBits))];
      if (e.shape == shape && e.bytes == op.bytes && e.flops == op.flops && e.read_bytes == op.read_bytes)
        return e.seconds;
      const double s = cost.estimate(op);
      e = Entry{shape, op.bytes, op.flops, op.read_bytes, s};
      return s;
    }
    void clear() { entries_.assign(kEntries, Entry{}); }

   private:
    static constexpr size_t kBits = 10, kEntries = size_t{1} << kBits;
    struct Entry {
      uint64_t shape = 0;  // tokens, layer, kind, resource, prefill, fresh, and bit 58 set: 0 is no entry
      uint64_t bytes = 0;
      double flops = 0;
      uint64_t read_bytes = 0;  // a fused read's (Op::read_bytes), 0 for any other op
      double seconds = 0;
    };
    std::vector<Entry> entries_ = std::vector<Entry>(kEntries);
  };
  mutable DurationCache durations_;
  double turnaround(const Op& op) const;  // the op's gap after the op before it on its unit, if it queues
  // SSD reads go to io_depth plain servers (measured_io_) rather than the SSD model: measured durations, a
  // runtime turnaround to add, or the I/O thread's CPU work per read (HardwareProfile::read_cpu) after the
  // device's time.
  bool reads_on_servers() const { return reads_on_servers_; }
  bool reads_on_servers_ = false;
  // Fixed by the options at construction, asked on every op: completions pass through the pipeline thread
  // (SimOptions::serial_pipeline), and an op goes to its resource at once (no hand-off is ever charged and
  // planning never delays a submission; submit()'s general path would then give now).
  bool serial_ = false;
  bool direct_submit_ = false;
  // Whether an op may have a turnaround (measured, or SimOptions::turnaround not all 0): else enqueue()
  // charges none without asking turnaround() per op.
  bool gaps_ = false;
  // The I/O thread's reads mark the profile's SSD read fields (CostModel::mark_ssd_read): a decode read only
  // without a curve point at depth 1 (fixed at construction), and each kind once, marks never being cleared.
  bool decode_reads_mark_ = false;
  bool read_marked_[2] = {false, false};  // [prefill]
  // A read's CPU work after the device: its measured one (the structure check), else the profile's.
  double read_tail(const Op& op) const;
  void enqueue(const Op& op, uint32_t job);
  // Ops on their way to their resource (a hand-off, or the pipeline's planning, delays them), by slot: an
  // event each, without a std::function (an Op is too large for its inline storage: one allocation per op).
  struct Delayed {
    Op op;
    uint32_t job = 0;
    bool handing = false;  // counted in handing_off_ until it is enqueued
  };
  std::vector<Delayed> delayed_;
  std::vector<uint32_t> free_delayed_;
  struct DelayHandler : EventHandler {
    SimPlatform* owner = nullptr;
    void on_event(uint64_t slot) override;
  };
  DelayHandler delay_handler_{};
  void report(uint32_t job, const OpTiming& timing);
  struct DispatchListener : JobListener {
    SimPlatform* owner = nullptr;
    void job_done(uint32_t job, const OpTiming& timing) override;
  };
  DispatchListener dispatch_listener_{};
  static constexpr uint32_t kPlanningJob = UINT32_MAX;  // a dispatcher job that is the pipeline's planning
  CostModel cost_;
  SimOptions opt_;
  bool workers_from_profile_ = false;  // the CPU workers are the profile's cpu.cores
  EventEngine engine_;
  CpuCores cores_;  // used when opt_.cpu_cores > 0
  Ssd ssd_;
  IoThread io_;
  ServerPool cpu_, gpu_, link_;
  ServerPool measured_io_;  // SSD reads with measured durations
  PageCache page_cache_;
  uint64_t major_faults_ = 0, decode_major_faults_ = 0, fault_bytes_ = 0;
  ServerPool dispatcher_;  // the pipeline thread (completion_latency > 0)
  // Completions passing through the pipeline thread (serial_), by dispatcher job: the op's job and its own
  // timing, reported after the dispatcher.
  std::vector<std::pair<uint32_t, OpTiming>> dispatching_;
  std::vector<uint32_t> free_dispatching_;
  double planned_until_ = 0;  // ops submitted before this time wait for the pipeline's planning
  OpSink* sink_ = nullptr;    // the sink of the ops in flight
  uint64_t in_flight_ = 0;    // ops submitted and not yet reported
  void submit_one(const Op& op, uint32_t job);
  void set_sink(OpSink* sink);
  uint32_t handing_off_[kResourceClasses] = {};  // ops in their hand-off to an idle unit, not yet enqueued
  double handoff_until_[kResourceClasses] = {};  // when the latest of them is enqueued
  uint32_t free_units(ResourceClass r) const;
  Rng rng_;
  double draw(const std::vector<double>& q) { return q[rng_.below(q.size())]; }
};

}  // namespace moesim::sim
