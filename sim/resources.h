// Resource models of the simulated platform (docs/architecture.md §5). Each resource queues jobs by
// (priority, arrival sequence) -- FIFO when priorities are equal -- and reports every job's start, end
// and serving unit to its JobListener from inside engine events.
//
// ServerPool: `units` identical servers (the GPU stream(s), the pool of L CPU worker threads, the
//   host-device link). A job holds one server for its whole duration, which the caller computes with the
//   cost model (core/cost_model.h). A job that arrives while a server is free starts at once. A pool whose
//   servers are CPU threads competing for too few cores (share_cores) holds a server until the job has had
//   its duration's worth of a core (sim/cpu_cores.h).
//
// Ssd: the exact model. At most `queue_depth` requests are in service; later ones wait in the queue. A
//   request in service first spends the fixed per-request `latency` (command, flash access; it shares
//   nothing), then transfers its bytes. All requests in the transfer phase share `bandwidth` equally
//   (processor sharing: with n transferring, each progresses at bandwidth / n). So one request alone
//   takes latency + b / bandwidth; two equal requests submitted together both end at
//   latency + 2b / bandwidth; and total throughput never exceeds the bandwidth.
//   With a queue-depth curve (set_depth_curve, the profile's ssd.queue_depth_curve) latency and bandwidth
//   depend on n, the requests in service (latency and transfer phases, whoever submitted them): a request
//   admitted with n in service, itself included, spends latency(n); the transfers share bandwidth(n), which
//   changes as requests are admitted and finish. A prefill's bulk reads keep their own latency and move
//   their bytes scaled as without a curve.
//
// Queue lengths: each resource reports its waiting line's length to an optional QueueObserver
// (core/platform.h) after every submit and completion, i.e. net of a job that queues and starts at once.
//
// IoThread: the single I/O thread of ZipMoE §3.3 that issues every SSD read. It keeps at most `depth`
//   reads outstanding at the SSD (depth 1 = blocking reads, one at a time, as in ZipMoE) and hands them
//   to the SSD in (priority, arrival) order. It is busy while at least one of its reads is outstanding.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/hardware_profile.h"
#include "core/platform.h"
#include "sim/cpu_cores.h"
#include "sim/event_queue.h"

namespace moesim::sim {

class JobListener {
 public:
  virtual ~JobListener() = default;
  virtual void job_done(uint32_t job, const OpTiming& timing) = 0;
};

// A waiting line ordered by (priority, arrival sequence). Jobs nearly always arrive in priority order (the
// pipeline and the schedulers hand a resource its ops by rising priority), so the line is two parts: a FIFO
// of the arrivals that sort after every job in it (priority >= its last one's: the arrival sequence only
// grows), pushed and popped in O(1), and a 4-ary heap (sim/quad_heap.h) of the others. pop() takes the
// earlier of the two fronts, so the order is the one (priority, sequence) gives whatever the arrivals.
class JobQueue {
 public:
  struct Item {
    int64_t priority;
    uint64_t seq;
    uint32_t job;
    bool bulk;      // SSD: a prefill step's read (Op::prefill), at the bulk rate
    double amount;  // duration (pool) or bytes (SSD)
    double gap;     // pool: the unit's turnaround before it starts this job after another
    double
        tail;  // pool: CPU work after the duration (ServerPool::share_cores_for_tails); IoThread: see submit
    bool waits = false;  // pool: the unit first waits outside the pool (ServerPool::submit_waiting)
  };
  // Inline: every job that finds its resource busy is pushed, and popped when a unit frees.
  void push(int64_t priority, uint32_t job, double amount, double gap = 0, bool bulk = false, double tail = 0,
            bool waits = false) {
    const Item it{priority, next_seq_++, job, bulk, amount, gap, tail, waits};
    if (fifo_.empty() || priority >= fifo_.back().priority)
      fifo_.push_back(it);
    else
      push_out_of_order(it);
  }
  Item pop() {  // not empty
    if (!heap_.empty() && (fifo_.empty() || Before{}(heap_.front(), fifo_[head_]))) return pop_heap();
    const Item it = fifo_[head_++];
    if (head_ == fifo_.size()) {
      fifo_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAt && 2 * head_ >= fifo_.size()) {
      compact();
    }
    return it;
  }
  bool empty() const { return fifo_.empty() && heap_.empty(); }
  size_t size() const { return fifo_.size() - head_ + heap_.size(); }
  void set_observer(QueueObserver* observer, uint32_t id) {
    observer_ = observer;
    id_ = id;
  }
  void report() const {
    if (observer_) observer_->queue_length(id_, size());
  }

 private:
  struct Before {  // the line's order
    bool operator()(const Item& a, const Item& b) const {
      return a.priority < b.priority || (a.priority == b.priority && a.seq < b.seq);
    }
  };
  // The FIFO's popped prefix is dropped once it is this long and at least half the vector (amortized O(1)).
  static constexpr size_t kCompactAt = 64;
  void push_out_of_order(const Item& it);
  Item pop_heap();
  void compact();
  std::vector<Item> fifo_;  // [head_, end): the line in order; [0, head_): popped
  size_t head_ = 0;
  std::vector<Item> heap_;
  uint64_t next_seq_ = 0;
  QueueObserver* observer_ = nullptr;
  uint32_t id_ = 0;
};

// Told when a job submitted with ServerPool::submit_waiting takes its unit.
class UnitWaiter {
 public:
  virtual ~UnitWaiter() = default;
  virtual void unit_taken(uint32_t job, uint32_t unit) = 0;
};

class ServerPool final : public EventHandler {
 public:
  ServerPool(EventEngine& engine, std::string name, uint32_t units, JobListener* listener);
  // `gap`: when the job waits in the queue, the unit that frees for it starts it this much later (a real
  // engine's turnaround: reporting the finished op, taking the next). A job that finds a unit free starts at
  // once. `tail`: the unit's CPU work after the duration (an I/O thread's after its read; see
  // share_cores_for_tails), the job ends when it is done.
  // Inline: every op of a pool's class is submitted here. A free unit of a pool without shared cores starts
  // the job at once (start()'s path for such a pool, without building an item); the other cases are
  // submit_queued's.
  void submit(uint32_t job, int64_t priority, double duration, double gap = 0, double tail = 0) {
    if (busy_units_ == units_.size() || !queue_.empty() || cores_ || tail_cores_)
      return submit_queued(job, priority, duration, gap, tail);
    ++ops_;
    const uint32_t u = first_free();
    take(u, job);
    const double t = std::max(tail, 0.0);
    busy_time_ += duration + t;
    engine_.schedule(engine_.now() + duration + t, this, u);
  }
  // A job whose unit first waits for something outside the pool (a CPU worker's own SSD read, ZipMoE §4):
  // it queues like any job; when it takes a unit the pool calls waiter->unit_taken(job, unit) (from inside
  // submit when a unit is free) and holds the unit, idle on the cores, until resume(unit, duration); then it
  // runs `duration` like any job's and reports its start as the time it took the unit.
  void submit_waiting(uint32_t job, int64_t priority, double gap, UnitWaiter* waiter);
  void resume(uint32_t unit, double duration);
  void on_event(uint64_t unit) override;

  ResourceStats stats() const;
  bool idle() const { return busy_units_ == 0 && queue_.empty(); }
  // Units that are free with nothing waiting (a submission now would start at once on one of them).
  uint32_t free_units() const {
    return queue_.empty() ? static_cast<uint32_t>(units_.size()) - busy_units_ : 0;
  }
  void add_bytes(uint64_t b) { bytes_ += b; }
  void set_queue_observer(QueueObserver* o, uint32_t id) { queue_.set_observer(o, id); }
  // Its units are threads that need a core while they run: a job's duration becomes its work on `cores`,
  // shared with the other pools attached to it (sim/cpu_cores.h). Before the first submit.
  void share_cores(CpuCores* cores) { cores_ = cores; }
  // Only the jobs' tails are work on `cores` (a unit that waits on a device, then runs on a core): the
  // duration passes as it is, the tail shares the cores. Without it a tail is added to the duration.
  void share_cores_for_tails(CpuCores* cores) { tail_cores_ = cores; }

 private:
  void start(uint32_t unit, const JobQueue::Item& item);
  // The first unit not busy; one is (busy_units_ counts the busy ones).
  uint32_t first_free() const {
    uint32_t u = 0;
    while (units_[u].busy) ++u;
    return u;
  }
  // `unit` taken by `job` now.
  void take(uint32_t unit, uint32_t job) {
    Unit& x = units_[unit];
    x.busy = true;
    x.job = job;
    x.start = engine_.now();
    ++busy_units_;
  }
  void submit_queued(uint32_t job, int64_t priority, double duration, double gap, double tail);
  EventEngine& engine_;
  std::string name_;
  JobListener* listener_;
  struct Unit {
    bool busy = false;
    uint32_t job = 0;
    double start = 0;
    double tail = 0;        // CPU work left to start on tail_cores_ once the duration is over
    JobQueue::Item next{};  // taken from the queue, starting after its gap
  };
  std::vector<Unit> units_;
  uint32_t busy_units_ = 0;
  JobQueue queue_;
  CpuCores* cores_ = nullptr;
  CpuCores* tail_cores_ = nullptr;
  UnitWaiter* waiter_ = nullptr;  // submit_waiting's (one per pool)
  double busy_time_ = 0;
  uint64_t ops_ = 0, bytes_ = 0;
};

class Ssd final : public EventHandler {
 public:
  Ssd(EventEngine& engine, double bandwidth, double latency, uint32_t queue_depth, JobListener* listener);
  // A prefill step's reads (bulk: nearly every expert of a layer back to back) at their own rate and latency;
  // by default the same as the others'.
  void set_bulk_rate(double bandwidth, double latency);
  // The queue-depth curve (points in increasing depth, HardwareProfile::ssd_queue_depth_curve); before the
  // first submit. Empty: the fixed latency and bandwidth.
  void set_depth_curve(std::vector<SsdDepthPoint> curve);
  bool has_depth_curve() const { return !curve_.empty(); }
  void submit(uint32_t job, int64_t priority, uint64_t bytes, bool bulk = false);
  void on_event(uint64_t arg) override;

  // Busy time = time with at least one request in service.
  ResourceStats stats() const;
  bool idle() const { return in_service_ == 0 && queue_.empty(); }
  void set_queue_observer(QueueObserver* o, uint32_t id) { queue_.set_observer(o, id); }
  // The most requests at the device at once (in service and waiting for a slot): above 1, the queue depth
  // shaped the run.
  size_t peak_requests() const { return peak_requests_; }
  // The most requests in service at once (what a queue-depth curve was read at).
  uint32_t peak_in_service() const { return peak_in_service_; }

 private:
  enum class Phase : uint8_t { kFree, kLatency, kTransfer };
  struct Slot {
    Phase phase = Phase::kFree;
    uint32_t job = 0;
    double start = 0;
    double remaining = 0;  // bytes still to transfer
  };
  void admit();
  void start_idle(uint32_t job, double amount, bool bulk);  // submit() to an idle SSD
  void start_transfer(uint32_t i);                          // on_event: a latency end, no transfer running
  void finish_only_transfer();                              // on_event: the one transfer's completion
  // Starts `it` in slot `s` (free): its latency phase.
  void start(uint32_t s, const JobQueue::Item& it);
  void advance() { advance_to(engine_.now()); }  // moves transfer progress up to now
  void advance_to(double t);
  // The next completion, while transfers run, when the one with `least` bytes left ends; replaces the
  // pending one (a ghost).
  void set_completion(double least);
  void settle_ghosts() {  // the ghosts due by now, first thing in each submit and event
    if (first_ghost_ <= engine_.now()) settle_due_ghosts();
  }
  void settle_due_ghosts();
  void reschedule();  // schedules the next transfer completion
  void set_in_service(int delta);
  double bandwidth_now() const {  // shared by the transfers, at the requests now in service
    return curve_.empty() ? bandwidth_ : at_depth_.bandwidth;
  }

  EventEngine& engine_;
  double bandwidth_, latency_;
  std::vector<SsdDepthPoint> curve_;
  SsdDepthPoint at_depth_{};  // with a curve: its point at in_service_ (set_in_service), asked by every event
  // With a curve: its point at each count of requests in service, 0 to the queue depth, computed once
  // (set_depth_curve) instead of interpolated at every admission and completion; the same values.
  std::vector<SsdDepthPoint> at_depths_;
  double bulk_scale_ = 1, bulk_latency_;  // a bulk read moves bytes * bulk_scale_ at bandwidth_
  JobListener* listener_;
  std::vector<Slot> slots_;
  uint32_t used_slots_ = 0;  // 1 + the highest slot index ever used: the passes over all slots stop there
  // With at most 64 slots, bit i: slot i is in its transfer phase. The passes over the transfers then visit
  // the set bits, in increasing slot order as the pass over all slots does (completions are reported in that
  // order), and skip the slots in latency or free.
  uint64_t transfer_bits_ = 0;
  template <typename F>
  void for_each_transfer(F f) {
    if (slots_.size() <= 64) {
      for (uint64_t bits = transfer_bits_; bits != 0; bits &= bits - 1)
        f(static_cast<uint32_t>(std::countr_zero(bits)));
      return;
    }
    for (uint32_t i = 0; i < used_slots_; ++i)
      if (slots_[i].phase == Phase::kTransfer) f(i);
  }
  void set_transfer_bit(uint32_t s, bool on) {
    if (s < 64)
      transfer_bits_ = on ? transfer_bits_ | uint64_t{1} << s : transfer_bits_ & ~(uint64_t{1} << s);
  }
  std::vector<std::pair<uint32_t, OpTiming>> done_;  // scratch of on_event
  uint32_t in_service_ = 0, transferring_ = 0;
  double last_update_ = 0;
  uint32_t timer_;  // the engine's timer of the next transfer completion
  // Replaced completions not yet applied (set_completion), and the earliest of them (infinity: none).
  std::vector<double> ghosts_;
  double first_ghost_ = std::numeric_limits<double>::infinity();
  JobQueue queue_;
  double busy_since_ = 0, busy_time_ = 0;
  uint64_t ops_ = 0, bytes_ = 0;
  size_t peak_requests_ = 0;
  uint32_t peak_in_service_ = 0;
};

class IoThread final : public JobListener {
 public:
  IoThread(Ssd& ssd, EventEngine& engine, uint32_t depth, JobListener* listener);
  // `cached_s` >= 0: a read the OS page cache serves (sim/page_cache.h): it holds one of the thread's `depth`
  // outstanding reads for that long (a copy out of DRAM) and never reaches the SSD.
  // Inline: with every read slot taken (a layer's reads arrive together) the read only queues, which is what
  // submit_issuing's path would do then (its dispatch() issues nothing).
  void submit(uint32_t job, int64_t priority, uint64_t bytes, bool bulk = false, double cached_s = -1) {
    if (outstanding_ < depth_) return submit_issuing(job, priority, bytes, bulk, cached_s);
    ++ops_;
    queue_.push(priority, job, static_cast<double>(bytes), 0, bulk, cached_s);
    queue_.report();
  }
  void job_done(uint32_t job, const OpTiming& timing) override;
  ResourceStats stats() const;
  bool idle() const { return outstanding_ == 0 && queue_.empty(); }
  uint32_t free_units() const { return queue_.empty() && outstanding_ < depth_ ? depth_ - outstanding_ : 0; }
  void set_queue_observer(QueueObserver* o, uint32_t id) { queue_.set_observer(o, id); }

 private:
  void submit_issuing(uint32_t job, int64_t priority, uint64_t bytes, bool bulk, double cached_s);
  void dispatch();
  void issue(const JobQueue::Item& it);  // hands a read to the SSD (or the page cache)
  Ssd& ssd_;
  EventEngine& engine_;
  uint32_t depth_;
  JobListener* listener_;
  uint32_t outstanding_ = 0;
  JobQueue queue_;
  double busy_since_ = 0, busy_time_ = 0;
  uint64_t ops_ = 0;
};

}  // namespace moesim::sim
