// The discrete-event engine (docs/architecture.md §5): a clock and a queue of pending events ordered by
// (time, sequence number). The sequence number grows by one per scheduled event, so events at the same
// time fire in the order they were scheduled -- never in an order that depends on the heap's layout --
// and a run is bit-for-bit reproducible. The queue is a 4-ary heap (sim/quad_heap.h): the simulator keeps
// about one event per busy unit pending (and the SSD's stale completions), each fired event scheduling about
// one more.
//
// Hot paths schedule a (handler, argument) pair: no allocation per event. schedule_fn() wraps a
// std::function for convenience (tests, one-off callbacks). Events cannot be cancelled; a resource that
// needs to move a completion (the SSD's processor sharing) bumps a generation counter and ignores stale
// events. Not thread-safe: one engine per simulation, driven by one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

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
  size_t pending() const { return heap_.size(); }
  uint64_t fired() const { return fired_; }

  // Schedules handler->on_event(arg) at time t >= now() (earlier times are a programming error and are
  // clamped to now(), so simulated time never runs backwards).
  // Inline: every resource schedules an event per op it starts.
  void schedule(double t, EventHandler* handler, uint64_t arg) {
    quad_heap_push(heap_, Event{std::max(t, now_), next_seq_++, handler, arg}, Before{});
  }
  void schedule_fn(double t, std::function<void()> fn);

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
  std::vector<Event> heap_;
  FnHandler fn_handler_{*this};
  std::vector<std::function<void()>> fns_;  // slots for schedule_fn, reused via free_fns_
  std::vector<uint64_t> free_fns_;
};

}  // namespace moesim::sim
