#include "sim/sim_platform.h"

#include <algorithm>

#include "base/error.h"

namespace moesim::sim {
namespace {

// The SSD model's queue-depth curve: the profile's, with ssd.read_latency and ssd.read_bandwidth as its
// depth-1 point where it has none of its own (docs/hardware-format.md); empty without a curve.
std::vector<SsdDepthPoint> depth_curve(const HardwareProfile& hw) {
  std::vector<SsdDepthPoint> c = hw.ssd_queue_depth_curve;
  if (!c.empty() && c.front().depth > 1)
    c.insert(c.begin(), SsdDepthPoint{1, hw.ssd_read_latency, hw.ssd_read_bandwidth});
  return c;
}

// Whether a decode step's reads take their depth-1 latency and bandwidth from the curve's own point rather
// than from ssd.read_latency and ssd.read_bandwidth.
bool curve_has_depth1(const HardwareProfile& hw) {
  return !hw.ssd_queue_depth_curve.empty() && hw.ssd_queue_depth_curve.front().depth <= 1;
}

}  // namespace

SimPlatform::SimPlatform(const HardwareProfile& hw, const SimOptions& opt)
    : cost_(hw),
      opt_(opt),
      cores_(engine_, opt.cpu_cores),
      ssd_(engine_, hw.ssd_read_bandwidth, hw.ssd_read_latency, hw.ssd_queue_depth, &ssd_listener_),
      io_(ssd_, engine_, opt.io_depth, this),
      cpu_(engine_, resource_pool_name(ResourceClass::kCpu), opt.cpu_workers ? opt.cpu_workers : hw.cpu_cores,
           this),
      gpu_(engine_, resource_pool_name(ResourceClass::kGpu), opt.gpu_streams, this),
      link_(engine_, resource_pool_name(ResourceClass::kLink), opt.links, this),
      measured_io_(engine_, kIoThreadPool, opt.io_depth, this),
      page_cache_(opt.buffered_io || opt.dense_mmap ? opt.page_cache_bytes : 0),
      dispatcher_(engine_, "pipeline", 1, &dispatch_listener_),
      rng_(opt.seed) {
  ssd_.set_depth_curve(depth_curve(hw));
  workers_from_profile_ = opt_.cpu_workers == 0;
  if (opt_.cpu_workers == 0) opt_.cpu_workers = hw.cpu_cores;
  dispatch_listener_.owner = this;
  delay_handler_.owner = this;
  ssd_listener_.owner = this;
  if (hw.ssd_prefill_read_bandwidth > 0)  // 0: a profile built in code without them, the same rate
    ssd_.set_bulk_rate(hw.ssd_prefill_read_bandwidth, hw.ssd_prefill_read_latency);
  serial_ = opt_.serial_pipeline();
  reads_on_servers_ = opt_.measured || opt_.turnaround[static_cast<size_t>(ResourceClass::kSsd)] > 0 ||
                      cost_.hardware().has_read_cpu();
  bool handoffs = opt_.dispatch_latency > 0 || (opt_.measured_handoff && opt_.measured);
  for (size_t r = 0; r < kResourceClasses; ++r)
    handoffs = handoffs || opt_.dispatch[r] > 0 || !opt_.dispatch_q[r].empty();
  decode_reads_mark_ = !curve_has_depth1(hw);
  gaps_ = opt_.measured_turnaround && opt_.measured;
  for (size_t r = 0; r < kResourceClasses; ++r) gaps_ = gaps_ || opt_.turnaround[r] != 0;
  direct_submit_ = !handoffs && !(opt_.plan_latency_fixed > 0) && !(opt_.plan_latency_per_op > 0) &&
                   !(opt_.measured_planning && opt_.measured);
  if (opt_.cpu_cores > 0) {
    cpu_.share_cores(&cores_);
    if (opt_.gpu_on_cpu) gpu_.share_cores(&cores_);
    measured_io_.share_cores_for_tails(&cores_);  // a read's CPU work after the device (read_tail())
  }
}

// Inline in each caller: every op of a run goes through one of them (submit_ready's loop, mostly).
[[gnu::always_inline]] inline void SimPlatform::enqueue(const Op& op, uint32_t job) {
  const double gap = gaps_ ? turnaround(op) : 0;  // before duration(), which takes the op's measurements
  switch (op.resource) {
    case ResourceClass::kSsd:
      // Measured durations, or a runtime turnaround to add: the reads go to io_depth plain servers (with
      // io_depth 1, the SSD model's latency + bytes / bandwidth exactly; deeper queues lose its sharing).
      if (reads_on_servers()) {
        measured_io_.add_bytes(op.bytes);
        if (read_hits_page_cache(op))
          return measured_io_.submit(job, op.priority, page_cache_read_time(op), gap);
        const double tail = read_tail(op);  // before duration(), which takes the op's measurements
        measured_io_.submit(job, op.priority, duration(op), gap, tail);
        return;
      }
      if (read_hits_page_cache(op))
        return io_.submit(job, op.priority, op.bytes, op.prefill, page_cache_read_time(op));
      if ((op.prefill || decode_reads_mark_) && !read_marked_[op.prefill]) {
        cost_.mark_ssd_read(op.prefill);
        read_marked_[op.prefill] = true;
      }
      io_.submit(job, op.priority, op.bytes, op.prefill);
      return;
    case ResourceClass::kCpu:
      if (workers_from_profile_) cost_.reads().mark(HwParam::kCpuCores);
      cpu_.add_bytes(op.bytes);
      if (op.fused_read()) return enqueue_fused(op, job, gap);
      cpu_.submit(job, op.priority, duration(op), gap);
      return;
    case ResourceClass::kGpu:
      gpu_.add_bytes(op.bytes);
      gpu_.submit(job, op.priority, duration(op) + dense_fault_time(op), gap);
      return;
    case ResourceClass::kLink:
      link_.add_bytes(op.bytes);
      link_.submit(job, op.priority, duration(op), gap);
      return;
  }
}

void SimPlatform::set_sink(OpSink* sink) {
  if (in_flight_ > 0)
    throw Error("sim platform: ops submitted for a second sink while the first one's are in flight");
  sink_ = sink;
}

void SimPlatform::submit(const Op& op, OpSink* sink, uint32_t token) {
  if (sink != sink_) set_sink(sink);
  ++in_flight_;
  submit_one(op, token);
}

void SimPlatform::submit_ready(std::span<const ReadyOp> ready, OpSink* sink) {
  if (sink != sink_) set_sink(sink);
  in_flight_ += ready.size();
  if (direct_submit_) {  // the common case, without a call per op
    for (const ReadyOp& r : ready) enqueue(*r.op, r.token);
    return;
  }
  for (const ReadyOp& r : ready) submit_one(*r.op, r.token);
}

void SimPlatform::submit_one(const Op& op, uint32_t job) {
  if (direct_submit_) return enqueue(op, job);  // no hand-off, no planning delay: what follows gives now
  const auto rc = static_cast<size_t>(op.resource);
  const double by_class = opt_.dispatch[rc] > 0 ? opt_.dispatch[rc] : opt_.dispatch_latency;
  // The hand-off is paid by an op that finds a unit idle (counting the ops already being handed to one).
  const bool idle_unit = free_units(op.resource) > handing_off_[rc];
  double handoff = 0;
  if (idle_unit) {
    const MeasuredDurations::Measured* own =
        opt_.measured_handoff && opt_.measured ? opt_.measured->peek(op) : nullptr;
    handoff = own && own->handoff >= 0 ? own->handoff
                                       : (opt_.dispatch_q[rc].empty() ? by_class : draw(opt_.dispatch_q[rc]));
  }
  double ready = std::max(engine_.now(), planned_until_) + handoff;
  // Every unit is busy or being woken: the op waits in the queue behind those being handed over.
  if (!idle_unit && handing_off_[rc] > 0) ready = std::max(ready, handoff_until_[rc]);
  const bool handing = idle_unit && handoff > 0;
  if (ready > engine_.now()) {
    if (handing) {
      ++handing_off_[rc];
      handoff_until_[rc] = std::max(handoff_until_[rc], ready);
    }
    uint32_t slot;
    if (!free_delayed_.empty()) {
      slot = free_delayed_.back();
      free_delayed_.pop_back();
      delayed_[slot] = Delayed{op, job, handing};
    } else {
      slot = static_cast<uint32_t>(delayed_.size());
      delayed_.push_back(Delayed{op, job, handing});
    }
    engine_.schedule(ready, &delay_handler_, slot);
    return;
  }
  enqueue(op, job);
}

void SimPlatform::DelayHandler::on_event(uint64_t slot) {
  const Delayed d = owner->delayed_[slot];
  owner->free_delayed_.push_back(static_cast<uint32_t>(slot));
  if (d.handing) --owner->handing_off_[static_cast<size_t>(d.op.resource)];
  owner->enqueue(d.op, d.job);
}

uint32_t SimPlatform::free_units(ResourceClass r) const {
  switch (r) {
    case ResourceClass::kSsd:
      return reads_on_servers() ? measured_io_.free_units() : io_.free_units();
    case ResourceClass::kCpu:
      return cpu_.free_units();
    case ResourceClass::kGpu:
      return gpu_.free_units();
    case ResourceClass::kLink:
      return link_.free_units();
  }
  return 0;
}

// ---- Fused reads (see the header) ----

void SimPlatform::enqueue_fused(const Op& op, uint32_t job, double gap) {
  Fused& f = fused_.insert(job);
  f = Fused{0, op.priority, op.read_bytes, op.prefill, -1, 0, -1};
  const MeasuredDurations::Measured* m = opt_.measured ? opt_.measured->peek(op) : nullptr;
  const double seconds = opt_.measured ? opt_.measured->next(op) : -1;  // counts a match or not
  if (m && seconds >= 0) {
    // Without the worker's CPU clock the parts cannot be told apart: all of it is work on the cores.
    f.wait = m->cpu_tail > 0 ? seconds : 0;
    f.work = m->cpu_tail > 0 ? m->cpu_tail : seconds;
  } else {
    Op decompress = op;
    decompress.read_bytes = 0;
    f.work = durations_.get(cost_, decompress);
    Op read = op;  // the read as the page cache sees it: the compressed E-chunk's bytes
    read.bytes = op.read_bytes;
    if (read_hits_page_cache(read)) {
      f.cached_s = page_cache_read_time(read);
    } else {
      // The worker that issues the read runs its CPU tail itself (the kernel's O_DIRECT path, the checksum),
      // as the I/O thread does for its reads: ssd.read_cpu_* charged to the worker's work.
      f.work += read_tail(read);
    }
  }
  cpu_.submit_waiting(job, op.priority, gap, this);
}

void SimPlatform::unit_taken(uint32_t job, uint32_t unit) {
  if (by_unit_.size() <= unit) by_unit_.resize(unit + 1);
  Fused& f = by_unit_[unit];
  f = fused_.take(job);
  f.unit = unit;
  f.job = job;
  if (f.wait >= 0) {
    engine_.schedule_fn(engine_.now() + f.wait, [this, unit] { fused_read_done(unit); });
    return;
  }
  if (f.cached_s >= 0) {  // a buffered run whose page cache holds the E-chunk: a copy, on this worker
    engine_.schedule_fn(engine_.now() + f.cached_s, [this, unit] { fused_read_done(unit); });
    return;
  }
  if (cost_.hardware().ssd_queue_depth <= opt_.io_depth) {
    // The profile's device serves no request beyond the I/O thread's own (calibrate writes the depth exec's
    // I/O thread ran with): the SSD model would queue this worker's read behind the I/O thread's, where the
    // disk serves the two threads' reads side by side. The read is its worker's wait at the idle-SSD
    // estimate, beside the I/O thread's reads.
    engine_.schedule_fn(engine_.now() + cost_.estimate(fused_chunk_read(f.bytes, f.prefill)),
                        [this, unit] { fused_read_done(unit); });
    return;
  }
  cost_.mark_ssd_read(f.prefill);
  ++fused_reading_;
  f.reading = true;
  ssd_.submit(job, f.priority, f.bytes, f.prefill);
}

void SimPlatform::fused_read_done(uint32_t unit) {
  Fused& f = by_unit_[unit];
  if (f.reading) {
    f.reading = false;
    --fused_reading_;
  }
  cpu_.resume(unit, f.work);
}

void SimPlatform::SsdListener::job_done(uint32_t job, const OpTiming& timing) {
  // A job is in flight once: a fused op reading at the SSD is no read of the I/O thread's.
  if (owner->fused_reading_ > 0)
    for (const Fused& f : owner->by_unit_)
      if (f.reading && f.job == job) return owner->fused_read_done(f.unit);
  owner->io_.job_done(job, timing);
}

size_t SimPlatform::FusedTable::slot(uint32_t job) const {
  const size_t mask = entries_.size() - 1;
  size_t i = home(job);
  while (entries_[i].used && entries_[i].job != job) i = (i + 1) & mask;
  return i;
}

SimPlatform::Fused& SimPlatform::FusedTable::insert(uint32_t job) {
  if (2 * (size_ + 1) > entries_.size()) grow();  // at most half full: short probes
  Entry& e = entries_[slot(job)];
  e.job = job;
  e.used = true;
  ++size_;
  return e.f;
}

SimPlatform::Fused SimPlatform::FusedTable::take(uint32_t job) {
  const size_t mask = entries_.size() - 1;
  size_t hole = slot(job);
  const Fused f = entries_[hole].f;
  // Backward shift: an entry after the hole moves into it unless its home lies cyclically in (hole, j].
  for (size_t j = (hole + 1) & mask; entries_[j].used; j = (j + 1) & mask) {
    const size_t h = home(entries_[j].job);
    const bool stays = hole < j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (stays) continue;
    entries_[hole] = entries_[j];
    hole = j;
  }
  entries_[hole].used = false;
  --size_;
  return f;
}

void SimPlatform::FusedTable::grow() {
  std::vector<Entry> old(entries_.size() * 2);
  old.swap(entries_);
  --shift_;
  size_ = 0;
  for (const Entry& e : old)
    if (e.used) insert(e.job) = e.f;
}

inline double SimPlatform::duration(const Op& op) const {
  if (opt_.measured) {
    const double d = opt_.measured->next(op);
    if (d >= 0) return d;
  }
  return durations_.get(cost_, op);  // estimate(op)
}

bool SimPlatform::read_hits_page_cache(const Op& op) {
  // A replayed run's measured read durations already hold whatever the page cache did.
  if (!opt_.buffered_io || opt_.measured) return false;
  return page_cache_.access(page_cache_key(op), op.bytes);
}

double SimPlatform::dense_fault_time(const Op& op) {
  if (!opt_.dense_mmap || op.kind != OpKind::kDenseCompute || opt_.measured || op.bytes == 0) return 0;
  if (page_cache_.access(dense_page_key(op.layer), op.bytes)) return 0;
  const uint64_t faults = (op.bytes + kFaultAroundBytes - 1) / kFaultAroundBytes;
  major_faults_ += faults;
  if (!op.prefill) decode_major_faults_ += faults;
  fault_bytes_ += op.bytes;
  // The kernel's read-around turns the thread's sequential faults into large reads: one read of the layer's
  // dense bytes at the SSD's rate, its fixed latency once.
  cost_.reads().mark(HwParam::kSsdReadBandwidth);
  cost_.reads().mark(HwParam::kSsdReadLatency);
  const HardwareProfile& hw = cost_.hardware();
  return hw.ssd_read_latency + static_cast<double>(op.bytes) / hw.ssd_read_bandwidth;
}

double SimPlatform::page_cache_read_time(const Op& op) const {
  cost_.reads().mark(HwParam::kCpuMemcpyBandwidth);
  return static_cast<double>(op.bytes) / cost_.hardware().cpu_memcpy_bandwidth;
}

double SimPlatform::read_tail(const Op& op) const {
  if (opt_.measured) {
    const MeasuredDurations::Measured* own = opt_.measured->peek(op);
    if (own) return own->cpu_tail;
  }
  return cost_.read_cpu(op.bytes, op.prefill);
}

HwReads SimPlatform::reads() const {
  HwReads r = cost_.reads();
  if (ssd_.peak_requests() > 1) r.mark(HwParam::kSsdQueueDepth);
  // The curve shaped the run where reads were in flight together, or where it has its own depth-1 point.
  if (!cost_.hardware().ssd_queue_depth_curve.empty() && ssd_.peak_in_service() > 0 &&
      (ssd_.peak_in_service() > 1 || curve_has_depth1(cost_.hardware())))
    r.mark(HwParam::kSsdQueueDepthCurve);
  return r;
}

double SimPlatform::turnaround(const Op& op) const {
  if (opt_.measured_turnaround && opt_.measured) {
    const MeasuredDurations::Measured* own = opt_.measured->peek(op);
    if (own && own->turnaround >= 0) return own->turnaround;
  }
  return opt_.turnaround[static_cast<size_t>(op.resource)];
}

void SimPlatform::job_done(uint32_t job, const OpTiming& timing) {
  // The common case calls the sink last (a tail call); the pipeline thread's path is a function of its own,
  // so that this one saves no registers for it. report()'s two lines are written out rather than called:
  // GCC keeps report() out of line, which would be a call per op on the hottest path.
  if (serial_) return job_done_serial(job, timing);
  --in_flight_;
  sink_->op_done(job, timing);
}

[[gnu::noinline]] void SimPlatform::job_done_serial(uint32_t job, const OpTiming& timing) {
  uint32_t slot;
  if (!free_dispatching_.empty()) {
    slot = free_dispatching_.back();
    free_dispatching_.pop_back();
    dispatching_[slot] = {job, timing};
  } else {
    slot = static_cast<uint32_t>(dispatching_.size());
    dispatching_.emplace_back(job, timing);
  }
  dispatcher_.submit(
      slot, 0,
      opt_.completion_latency +
          (dispatcher_.idle() ? (opt_.wake_q.empty() ? opt_.wake_latency : draw(opt_.wake_q)) : 0));
}

void SimPlatform::DispatchListener::job_done(uint32_t slot, const OpTiming&) {
  if (slot == kPlanningJob) return;  // the pipeline thread's planning, not an op
  const auto [job, timing] = owner->dispatching_[slot];
  owner->free_dispatching_.push_back(slot);
  owner->report(job, timing);
}

void SimPlatform::report(uint32_t job, const OpTiming& timing) {
  --in_flight_;
  sink_->op_done(job, timing);
}

void SimPlatform::run_until_idle() {
  engine_.run();
}

std::vector<ResourceStats> SimPlatform::resource_stats() const {
  if (reads_on_servers())
    return {ssd_.stats(), measured_io_.stats(), cpu_.stats(), gpu_.stats(), link_.stats()};
  return {ssd_.stats(), io_.stats(), cpu_.stats(), gpu_.stats(), link_.stats()};
}

std::vector<std::string> SimPlatform::queue_names() const {
  return {kIoThreadPool, resource_pool_name(ResourceClass::kSsd), resource_pool_name(ResourceClass::kCpu),
          resource_pool_name(ResourceClass::kGpu), resource_pool_name(ResourceClass::kLink)};
}

void SimPlatform::set_queue_observer(QueueObserver* observer) {
  io_.set_queue_observer(observer, 0);
  ssd_.set_queue_observer(observer, 1);
  cpu_.set_queue_observer(observer, 2);
  gpu_.set_queue_observer(observer, 3);
  link_.set_queue_observer(observer, 4);
}

void SimPlatform::ops_planned(const OpGraph& graph) {
  const auto n = static_cast<double>(graph.size());
  double head = opt_.plan_latency_fixed + opt_.plan_latency_per_op * n;
  double tail = opt_.plan_tail_fixed + opt_.plan_tail_per_op * n;
  PlanningTime measured;
  if (opt_.measured_planning && opt_.measured &&
      opt_.measured->next_planning(static_cast<uint32_t>(graph.size()), &measured)) {
    head = measured.head;
    tail = measured.tail;
  }
  if (head <= 0 && tail <= 0) return;
  planned_until_ = std::max(planned_until_, engine_.now()) + head;
  // The pipeline thread plans (head), then submits and cleans up (tail): completions reported meanwhile
  // queue behind it. Ahead of the completions already waiting (priority -1): this call is running now.
  dispatcher_.submit(kPlanningJob, -1, head + tail);
}

double SimPlatform::estimate(const Op& op) const {
  return durations_.get(cost_, op);
}

uint32_t SimPlatform::units(ResourceClass r) const {
  switch (r) {
    case ResourceClass::kSsd:
      return opt_.io_depth;
    case ResourceClass::kCpu:
      return opt_.cpu_workers ? opt_.cpu_workers : cost_.hardware().cpu_cores;
    case ResourceClass::kGpu:
      return opt_.gpu_streams;
    case ResourceClass::kLink:
      return opt_.links;
  }
  return 1;
}

std::string SimPlatform::describe() const {
  return "sim: " + cost_.hardware().name;
}

}  // namespace moesim::sim
