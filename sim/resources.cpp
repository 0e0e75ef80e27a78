#include "sim/resources.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "sim/quad_heap.h"

namespace moesim::sim {

void JobQueue::push_out_of_order(const Item& it) {
  quad_heap_push(heap_, it, Before{});
}

JobQueue::Item JobQueue::pop_heap() {
  return quad_heap_pop(heap_, Before{});
}

void JobQueue::compact() {
  fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(head_));
  head_ = 0;
}

// ---- ServerPool ----

ServerPool::ServerPool(EventEngine& engine, std::string name, uint32_t units, JobListener* listener)
    : engine_(engine), name_(std::move(name)), listener_(listener), units_(std::max(units, 1u)) {}

namespace {
constexpr uint64_t kStartEvent = 1ull << 63;  // ServerPool: a unit's turnaround is over, its next job starts
constexpr uint64_t kTailEvent = 1ull << 62;   // ServerPool: a job's duration is over, its CPU tail starts
}  // namespace

// submit() of a job that finds every unit busy, a waiting line, or a pool sharing cores.
void ServerPool::submit_queued(uint32_t job, int64_t priority, double duration, double gap, double tail) {
  ++ops_;
  if (busy_units_ < units_.size() && queue_.empty())
    return start(first_free(), JobQueue::Item{priority, 0, job, false, duration, 0, tail});
  queue_.push(priority, job, duration, gap, false, tail);
  queue_.report();
}

void ServerPool::submit_waiting(uint32_t job, int64_t priority, double gap, UnitWaiter* waiter) {
  waiter_ = waiter;
  ++ops_;
  if (busy_units_ < units_.size() && queue_.empty())
    return start(first_free(), JobQueue::Item{priority, 0, job, false, 0, 0, 0, true});
  queue_.push(priority, job, 0, gap, false, 0, true);
  queue_.report();
}

void ServerPool::resume(uint32_t unit, double duration) {
  const Unit& u = units_[unit];
  if (cores_) return cores_->start(this, unit, duration);  // busy time counted at the end
  if (!tail_cores_) busy_time_ += engine_.now() - u.start + duration;
  engine_.schedule(engine_.now() + duration, this, unit);
}

void ServerPool::start(uint32_t unit, const JobQueue::Item& item) {
  take(unit, item.job);
  if (item.waits) return waiter_->unit_taken(item.job, unit);  // resume() goes on
  const double tail = std::max(item.tail, 0.0);
  if (cores_) {
    cores_->start(this, unit, item.amount + tail);  // busy time counted at the end: contention stretches it
    return;
  }
  if (tail > 0 && tail_cores_) {  // the duration, then the tail on the shared cores
    units_[unit].tail = tail;
    engine_.schedule(engine_.now() + item.amount, this, kTailEvent | unit);
    return;
  }
  if (!tail_cores_) busy_time_ += item.amount + tail;  // else counted at the end, as with cores_
  engine_.schedule(engine_.now() + item.amount + tail, this, unit);
}

void ServerPool::on_event(uint64_t arg) {
  if (arg & kStartEvent) {  // the turnaround before a queued job is over
    const auto unit = static_cast<uint32_t>(arg & ~kStartEvent);
    --busy_units_;  // start() takes the unit again
    return start(unit, units_[unit].next);
  }
  if (arg & kTailEvent) {  // the duration is over: the CPU tail, ending with on_event(unit)
    const auto unit = static_cast<uint32_t>(arg & ~kTailEvent);
    tail_cores_->start(this, unit, units_[unit].tail);
    units_[unit].tail = 0;
    return;
  }
  const auto unit = static_cast<uint32_t>(arg);
  Unit& u = units_[unit];
  u.busy = false;
  --busy_units_;
  if (cores_ || tail_cores_) busy_time_ += engine_.now() - u.start;
  const OpTiming t{u.start, engine_.now(), unit};
  const uint32_t job = u.job;
  // Start the next job before reporting, so a job submitted by the listener queues behind it (FIFO).
  if (!queue_.empty()) {
    const JobQueue::Item next = queue_.pop();
    queue_.report();
    if (next.gap > 0) {  // the unit stays taken through its turnaround
      u.busy = true;
      u.next = next;
      ++busy_units_;
      engine_.schedule(engine_.now() + next.gap, this, kStartEvent | unit);
    } else {
      start(unit, next);
    }
  }
  listener_->job_done(job, t);
}

ResourceStats ServerPool::stats() const {
  return ResourceStats{name_, static_cast<uint32_t>(units_.size()), busy_time_, ops_, bytes_};
}

// ---- Ssd ----

namespace {
constexpr uint64_t kLatencyEvent = 1ull << 63;

constexpr uint64_t kCompletionEvent = 0;  // the SSD's timer: the next transfer completion
}  // namespace

Ssd::Ssd(EventEngine& engine, double bandwidth, double latency, uint32_t queue_depth, JobListener* listener)
    : engine_(engine),
      bandwidth_(bandwidth),
      latency_(latency),
      bulk_latency_(latency),
      listener_(listener),
      slots_(std::max(queue_depth, 1u)),
      timer_(engine.add_timer(this)) {}

void Ssd::set_depth_curve(std::vector<SsdDepthPoint> curve) {
  curve_ = std::move(curve);
  at_depths_.clear();
  if (!curve_.empty())  // in service: at most one request per slot
    for (size_t n = 0; n <= slots_.size(); ++n)
      at_depths_.push_back(ssd_curve_at(curve_, static_cast<double>(n)));
  set_in_service(0);
}

inline void Ssd::set_in_service(int delta) {
  if (in_service_ == 0 && delta > 0) busy_since_ = engine_.now();
  in_service_ = static_cast<uint32_t>(static_cast<int>(in_service_) + delta);
  if (!curve_.empty()) at_depth_ = at_depths_[in_service_];
  peak_in_service_ = std::max(peak_in_service_, in_service_);
  if (in_service_ == 0 && delta < 0) busy_time_ += engine_.now() - busy_since_;
}

void Ssd::set_bulk_rate(double bandwidth, double latency) {
  bulk_scale_ = bandwidth_ / bandwidth;
  bulk_latency_ = latency;
}

void Ssd::submit(uint32_t job, int64_t priority, uint64_t bytes, bool bulk) {
  settle_ghosts();
  ++ops_;
  bytes_ += bytes;
  // Sharing the bandwidth between transfers stays one model: a bulk read moves proportionally more of it.
  const double amount = static_cast<double>(bytes) * (bulk ? bulk_scale_ : 1.0);
  if (in_service_ == 0 && queue_.empty()) return start_idle(job, amount, bulk);
  // Nothing waiting and a slot free: the request takes the first free slot at once, as admit() would give
  // it after a push and a pop (a waiting line's order is among the requests that wait, and none does).
  const bool at_once = queue_.empty() && in_service_ < slots_.size();
  const auto enter = [&] {
    if (!at_once) return admit();
    uint32_t s = 0;
    while (slots_[s].phase != Phase::kFree) ++s;
    start(s, JobQueue::Item{priority, 0, job, bulk, amount, 0, 0});
  };
  if (!at_once) queue_.push(priority, job, amount, 0, bulk);
  peak_requests_ = std::max(peak_requests_, in_service_ + queue_.size() + (at_once ? 1 : 0));
  if (curve_.empty()) {
    enter();
  } else {  // an admission changes the bandwidth the transfers share: progress up to now at the old one
    advance();
    const uint32_t before = in_service_;
    enter();
    if (in_service_ != before) reschedule();
  }
  queue_.report();
}

// The general path below for a request that finds the SSD idle (offload's blocking reads: nearly every read),
// written out: the same state and the same operations. Nothing is in service, so no transfer moves
// (advance() only sets the clock of the progress), the request takes slot 0, and no completion is pending
// (reschedule() would leave none).
inline void Ssd::start_idle(uint32_t job, double amount, bool bulk) {
  const double now = engine_.now();
  peak_requests_ = std::max<size_t>(peak_requests_, 1);
  used_slots_ = std::max(used_slots_, 1u);
  slots_[0] = Slot{Phase::kLatency, job, now, amount};
  busy_since_ = now;
  in_service_ = 1;
  peak_in_service_ = std::max(peak_in_service_, 1u);
  double latency = bulk ? bulk_latency_ : latency_;
  if (!curve_.empty()) {
    last_update_ = now;
    at_depth_ = at_depths_[1];
    if (!bulk) latency = at_depth_.latency;
  }
  engine_.schedule(now + latency, this, kLatencyEvent);
  queue_.report();
}

void Ssd::admit() {
  for (uint32_t s = 0; s < slots_.size() && !queue_.empty(); ++s)
    if (slots_[s].phase == Phase::kFree) start(s, queue_.pop());
}

void Ssd::start(uint32_t s, const JobQueue::Item& it) {
  used_slots_ = std::max(used_slots_, s + 1);
  slots_[s] = Slot{Phase::kLatency, it.job, engine_.now(), it.amount};
  set_in_service(+1);
  const double latency = it.bulk ? bulk_latency_ : curve_.empty() ? latency_ : at_depth_.latency;
  engine_.schedule(engine_.now() + latency, this, kLatencyEvent | s);
}

// A replaced completion's time is a ghost: the model used to let the replaced event fire (stale), and
// firing moved the transfers' progress up to its time, a step of its own in each transfer's rounded
// subtractions. Only the SSD reads that progress, and its transfer set and bandwidth change only in its own
// calls, so the ghosts due by now, applied in time order before anything else the SSD does, make the same
// steps from the same operands. A ghost at the current time changes nothing whichever side of the current
// call it would have fired (its step is then 0).
inline void Ssd::set_completion(double least) {
  if (engine_.timer_armed(timer_)) {
    const double t = engine_.timer_time(timer_);
    ghosts_.push_back(t);
    first_ghost_ = std::min(first_ghost_, t);
    engine_.reach(t);  // the replaced event would have moved the clock there
  }
  if (transferring_ == 0) return engine_.clear_timer(timer_);
  const double dt = std::max(least, 0.0) * transferring_ / bandwidth_now();
  engine_.set_timer(timer_, engine_.now() + dt, kCompletionEvent);
}

// advance_to() of each due ghost in time order, its transfer steps first computed once (the transfer set
// and the bandwidth do not change in between), then each transfer's bytes left taking them in that order: the
// same subtractions of the same operands, without a pass over the transfers per ghost.
void Ssd::settle_due_ghosts() {
  const double now = engine_.now();
  std::sort(ghosts_.begin(), ghosts_.end());
  size_t due = 0;
  while (due < ghosts_.size() && ghosts_[due] <= now) ++due;
  size_t steps = 0;  // ghosts_[0, steps): the progress of each step that moves, overwriting the ghosts read
  double last = last_update_;
  const double bw = bandwidth_now();
  for (size_t k = 0; k < due; ++k) {
    const double t = ghosts_[k];
    const double dt = t - last;
    last = t;
    if (transferring_ != 0 && dt > 0) ghosts_[steps++] = dt * bw / transferring_;
  }
  last_update_ = last;
  if (steps > 0)
    for_each_transfer([&](uint32_t i) {
      double left = slots_[i].remaining;
      for (size_t j = 0; j < steps; ++j) left -= ghosts_[j];
      slots_[i].remaining = left;
    });
  ghosts_.erase(ghosts_.begin(), ghosts_.begin() + static_cast<std::ptrdiff_t>(due));
  first_ghost_ = ghosts_.empty() ? std::numeric_limits<double>::infinity() : ghosts_.front();
}

void Ssd::advance_to(double t) {
  const double dt = t - last_update_;
  last_update_ = t;
  if (transferring_ == 0 || dt <= 0) return;
  const double progressed = dt * bandwidth_now() / transferring_;
  for_each_transfer([&](uint32_t i) { slots_[i].remaining -= progressed; });
}

void Ssd::reschedule() {
  double least = std::numeric_limits<double>::infinity();
  for_each_transfer([&](uint32_t i) { least = std::min(least, slots_[i].remaining); });
  set_completion(least);
}

void Ssd::on_event(uint64_t arg) {
  settle_ghosts();
  if (transferring_ <= 1) {
    if (transferring_ == 0) {  // no transfer moves (a latency end): the general path below, written out
      last_update_ = engine_.now();
      return start_transfer(static_cast<uint32_t>(arg & ~kLatencyEvent));
    }
    if (arg == kCompletionEvent) return finish_only_transfer();
  }
  // One pass over the slots: advance()'s progress up to now, and the least remaining transfer after it.
  const double dt = engine_.now() - last_update_;
  last_update_ = engine_.now();
  const bool moved = transferring_ != 0 && dt > 0;
  const double progressed = moved ? dt * bandwidth_now() / transferring_ : 0.0;
  double least = std::numeric_limits<double>::infinity();
  for_each_transfer([&](uint32_t i) {
    Slot& s = slots_[i];
    if (moved) s.remaining -= progressed;
    least = std::min(least, s.remaining);
  });
  if (arg & kLatencyEvent) {
    const auto i = static_cast<uint32_t>(arg & ~kLatencyEvent);
    Slot& s = slots_[i];
    s.phase = Phase::kTransfer;
    set_transfer_bit(i, true);
    ++transferring_;
    // reschedule(), with the least remaining already known: the new transfer's or an older one's.
    set_completion(std::min(least, s.remaining));
    return;
  }
  // Finish every transfer that is done. The event was scheduled for the least remaining transfer to reach
  // zero; transfers within a milli-byte of it end together (that absorbs rounding in the shared progress).
  // The others' least remaining is the next completion's: admit() starts requests in their latency phase,
  // which leaves the transfers as they are.
  std::vector<std::pair<uint32_t, OpTiming>>& done = done_;
  done.clear();
  double next = std::numeric_limits<double>::infinity();
  for_each_transfer([&](uint32_t i) {  // visits the bits as they were: clearing one here is safe
    Slot& s = slots_[i];
    if (s.remaining > least + 1e-3) {
      next = std::min(next, s.remaining);
      return;
    }
    done.push_back({s.job, OpTiming{s.start, engine_.now(), i}});
    s.phase = Phase::kFree;
    set_transfer_bit(i, false);
    --transferring_;
    set_in_service(-1);
  });
  admit();
  queue_.report();
  set_completion(next);
  for (const auto& [job, t] : done) listener_->job_done(job, t);
}

// on_event's latency end with no transfer running: slot `i` starts the only transfer, whose end is the next
// completion (the general path's least remaining, min(infinity, its bytes)).
inline void Ssd::start_transfer(uint32_t i) {
  Slot& s = slots_[i];
  s.phase = Phase::kTransfer;
  set_transfer_bit(i, true);
  ++transferring_;
  set_completion(std::min(std::numeric_limits<double>::infinity(), s.remaining));
}

// on_event's current completion with one transfer running: the general path for that case. The transfer is
// the least remaining one, so it ends; the requests admit() starts are in their latency phase, so no transfer
// runs after it and no completion is pending (the timer fired; set_completion would leave it clear).
inline void Ssd::finish_only_transfer() {
  uint32_t i = 0;
  if (slots_.size() <= 64)
    i = static_cast<uint32_t>(std::countr_zero(transfer_bits_));
  else
    while (slots_[i].phase != Phase::kTransfer) ++i;
  Slot& s = slots_[i];
  const double now = engine_.now();
  last_update_ = now;  // the progress up to now: a freed slot's bytes left are never read
  const uint32_t job = s.job;
  const OpTiming t{s.start, now, i};
  s.phase = Phase::kFree;
  set_transfer_bit(i, false);
  --transferring_;
  set_in_service(-1);
  if (!queue_.empty()) admit();
  queue_.report();
  listener_->job_done(job, t);
}

ResourceStats Ssd::stats() const {
  double busy = busy_time_;
  if (in_service_ > 0) busy += engine_.now() - busy_since_;
  return ResourceStats{resource_pool_name(ResourceClass::kSsd), 1, busy, ops_, bytes_};
}

// ---- IoThread ----

IoThread::IoThread(Ssd& ssd, EventEngine& engine, uint32_t depth, JobListener* listener)
    : ssd_(ssd), engine_(engine), depth_(std::max(depth, 1u)), listener_(listener) {}

// submit() with a read slot free.
void IoThread::submit_issuing(uint32_t job, int64_t priority, uint64_t bytes, bool bulk, double cached_s) {
  ++ops_;
  const auto amount = static_cast<double>(bytes);  // the bytes as an item holds them
  // Nothing waiting and a read slot free: issued at once, as dispatch() would after a push and a pop.
  if (queue_.empty() && outstanding_ < depth_) {
    if (cached_s < 0) {  // issue() for an SSD read, written out (its bytes through the item's double)
      if (outstanding_++ == 0) busy_since_ = engine_.now();
      ssd_.submit(job, priority, static_cast<uint64_t>(amount), bulk);
    } else {
      issue(JobQueue::Item{priority, 0, job, bulk, amount, 0, cached_s});
    }
  } else {
    queue_.push(priority, job, amount, 0, bulk, cached_s);
    dispatch();
  }
  queue_.report();
}

inline void IoThread::dispatch() {
  while (outstanding_ < depth_ && !queue_.empty()) issue(queue_.pop());
}

inline void IoThread::issue(const JobQueue::Item& it) {
  if (outstanding_++ == 0) busy_since_ = engine_.now();
  if (it.tail >= 0) {  // served by the page cache
    const double start = engine_.now();
    const uint32_t job = it.job;
    engine_.schedule_fn(start + it.tail, [this, job, start] {
      job_done(job, OpTiming{start, engine_.now(), 0});
    });
    return;
  }
  ssd_.submit(it.job, it.priority, static_cast<uint64_t>(it.amount), it.bulk);
}

void IoThread::job_done(uint32_t job, const OpTiming& timing) {
  if (--outstanding_ == 0) busy_time_ += engine_.now() - busy_since_;
  if (!queue_.empty()) dispatch();
  queue_.report();
  listener_->job_done(job, timing);
}

ResourceStats IoThread::stats() const {
  double busy = busy_time_;
  if (outstanding_ > 0) busy += engine_.now() - busy_since_;
  return ResourceStats{kIoThreadPool, 1, busy, ops_, 0};
}

}  // namespace moesim::sim
