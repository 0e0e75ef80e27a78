// The discrete-event engine (docs/architecture.md §5): a clock and a queue of pending events ordered by
// (time, sequence number). The sequence number grows by one per scheduled event, so events at the same
// time fire in the order they were scheduled -- never in an order that depends on the heap's layout --
// and a run is bit-for-bit reproducible. The simulator keeps about one event per busy unit pending (1-3 for
// an offloading run, 8-15 for ZipMoE's), each fired event scheduling about one more: while few, the queue is
// a sorted line (a pop takes its first slot; a push lands last or first, or shifts the later events up one
// slot), and past kLineMax events a 4-ary heap (sim/quad_heap.h).
//
// Hot paths schedule a (handler, argument) pair: no allocation per event. schedule_fn() wraps a
// std::function for convenience (tests, one-off callbacks). Events cannot be cancelled.
//
// Timers: a handler that keeps moving one pending event of its own (the SSD's next transfer completion,
// which every admission and latency end moves) holds a timer instead. set_timer() replaces the timer's
// pending setting and takes the sequence number that schedule() would take at that moment, so the events
// fire in exactly the order that scheduling a new event each time would give, minus the replaced settings,
// which never fire. A timer lives outside the queue: step() compares the queue's first event with the armed
// timers (one or two), where an indexed heap would pay a handle update on every move of every event.
//
// reach(t): the clock ends at t or later once nothing is pending (run(), or step() finding nothing to fire).
// A timer's owner that used to let a replaced event fire (and so move the clock at the run's end) says so.
//
// Not thread-safe: one engine per simulation, driven by one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/interrupt.h"
#include "sim/quad_heap.h"

namespace moesim::sim {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(uint64_t arg) = 0;
};

class EventEngine {
 public:
  double now() const { return now_; }
  size_t pending() const { return (heap_mode_ ? heap_.size() : tail_ - head_) + armed_; }
  uint64_t fired() const { return fired_; }

  // Schedules handler->on_event(arg) at time t >= now() (earlier times are a programming error and are
  // clamped to now(), so simulated time never runs backwards).
  // Inline: every resource schedules an event per op it starts.
  void schedule(double t, EventHandler* handler, uint64_t arg) {
    const Event e{std::max(t, now_), next_seq_++, handler, arg};
    if (heap_mode_) return heap_push(e);
    if (tail_ == kLineSlots && !compact()) return heap_push(e);
    // e's sequence number is above every pending event's: e fires before one of them exactly when its time
    // is earlier, and a tie goes after. So the line compares times only.
    Event* end = line_ + tail_;
    if (tail_ == head_ || !(e.time < end[-1].time)) {  // after every pending event: appended
      *end = e;
      ++tail_;
      return;
    }
    const bool first = e.time < line_[head_].time;  // before every pending event
    if (first && head_ > 0) {                       // prepended
      line_[--head_] = e;
      return;
    }
    if (tail_ - head_ >= kLineMax) return heap_push(e);
    Event* p = end;
    Event* const stop = first ? line_ + head_ : line_ + head_ + 1;  // e is not before line_[head_]
    do {                                                            // the later events move up one slot
      *p = p[-1];
      --p;
    } while (p != stop && e.time < p[-1].time);
    *p = e;
    ++tail_;
  }
  void schedule_fn(double t, std::function<void()> fn);

  // A timer for `handler` (not armed); its id for set_timer/clear_timer.
  uint32_t add_timer(EventHandler* handler);
  // Arms timer `id` at time t (clamped to now() as schedule() does) with `arg`, replacing its pending
  // setting if any. Inline: the SSD moves its completion at every admission.
  void set_timer(uint32_t id, double t, uint64_t arg) {
    Timer& tm = timers_[id];
    if (!tm.armed) ++armed_;
    tm.armed = true;
    tm.ev = Event{std::max(t, now_), next_seq_++, tm.ev.handler, arg};
  }
  void clear_timer(uint32_t id) {
    Timer& tm = timers_[id];
    if (tm.armed) --armed_;
    tm.armed = false;
  }
  bool timer_armed(uint32_t id) const { return timers_[id].armed; }
  double timer_time(uint32_t id) const { return timers_[id].ev.time; }
  // The clock reaches at least t once nothing is pending.
  void reach(double t) { horizon_ = std::max(horizon_, t); }

  // Fires the earliest event; false when none is pending.
  bool step();
  // Fires events until none is pending.
  void run();
  // Fires events with time <= t, then sets the clock to max(now, t).
  void run_until(double t);

 private:
  struct Event {
    double time;
    uint64_t seq;
    EventHandler* handler;
    uint64_t arg;
  };
  // Whether `a` fires before `b`: the heap's order, explicit (a type, so that the heap inlines it).
  struct Before {
    bool operator()(const Event& a, const Event& b) const {
      return a.time < b.time || (a.time == b.time && a.seq < b.seq);
    }
  };
  struct Timer {
    bool armed = false;
    Event ev{};
  };
  // The armed timer that fires first; some timer is armed (armed_ > 0).
  Timer* first_timer() {
    if (timers_.size() == 1) return &timers_.front();  // one SSD: its timer, armed
    Timer* first = nullptr;
    for (Timer& tm : timers_)
      if (tm.armed && (!first || Before{}(tm.ev, first->ev))) first = &tm;
    return first;
  }
  void fire(double t, EventHandler* handler, uint64_t arg) {
    now_ = t;
    if ((++fired_ & 0xFFF) == 0) interrupt_point();  // every 4096 events: well under a millisecond of work
    handler->on_event(arg);
  }
  bool advance();  // step()
  // The first event outside the timers, or null when none is pending.
  const Event* next_event() const {
    if (!heap_mode_) return head_ < tail_ ? &line_[head_] : nullptr;
    return heap_.empty() ? nullptr : &heap_.front();
  }
  void heap_push(const Event& e);  // heap mode, or the line long: the line becomes the heap first
  Event heap_pop();                // heap mode; back to the line once the heap is short
  // The line reached its last slot: moves it down to kLineFront; false (nothing moved) when it is long.
  bool compact();
  class FnHandler : public EventHandler {
   public:
    explicit FnHandler(EventEngine& e) : engine_(e) {}
    void on_event(uint64_t arg) override;

   private:
    EventEngine& engine_;
  };

  double now_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t fired_ = 0;
  // Pending events outside the timers: while few, a sorted line line_[head_, tail_) (earliest first), where
  // a pop takes the first slot and a push shifts the events after it up one slot (most events land last or
  // first: no shift); past kLineMax events, a 4-ary heap (heap_mode_), back to the line below kHeapMin. A
  // sorted line is a valid heap, and both pop the same (time, seq) order.
  static constexpr uint32_t kLineSlots = 128, kLineMax = 64, kLineFront = 16, kHeapMin = 16;
  Event line_[kLineSlots];
  uint32_t head_ = kLineFront, tail_ = kLineFront;
  bool heap_mode_ = false;
  std::vector<Event> heap_;
  std::vector<Timer> timers_;
  uint32_t armed_ = 0;  // timers armed
  double horizon_ = 0;  // reach()
  FnHandler fn_handler_{*this};
  std::vector<std::function<void()>> fns_;  // slots for schedule_fn, reused via free_fns_
  std::vector<uint64_t> free_fns_;
};

}  // namespace moesim::sim
