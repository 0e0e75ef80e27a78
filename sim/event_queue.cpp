#include "sim/event_queue.h"

#include <algorithm>
#include <utility>

#include "base/interrupt.h"

namespace moesim::sim {

void EventEngine::schedule_fn(double t, std::function<void()> fn) {
  uint64_t slot;
  if (!free_fns_.empty()) {
    slot = free_fns_.back();
    free_fns_.pop_back();
    fns_[slot] = std::move(fn);
  } else {
    slot = fns_.size();
    fns_.push_back(std::move(fn));
  }
  schedule(t, &fn_handler_, slot);
}

void EventEngine::FnHandler::on_event(uint64_t arg) {
  std::function<void()> fn = std::move(engine_.fns_[arg]);
  engine_.fns_[arg] = nullptr;
  engine_.free_fns_.push_back(arg);
  fn();
}

uint32_t EventEngine::add_timer(EventHandler* handler) {
  Timer tm;
  tm.ev.handler = handler;
  timers_.push_back(tm);
  return static_cast<uint32_t>(timers_.size() - 1);
}

void EventEngine::heap_push(const Event& e) {
  if (!heap_mode_) {  // the line, sorted, is a valid heap as it stands
    heap_.assign(line_ + head_, line_ + tail_);
    head_ = tail_ = kLineFront;
    heap_mode_ = true;
  }
  quad_heap_push(heap_, e, Before{});
}

EventEngine::Event EventEngine::heap_pop() {
  const Event e = quad_heap_pop(heap_, Before{});
  if (heap_.size() < kHeapMin) {
    std::sort(heap_.begin(), heap_.end(), Before{});
    std::copy(heap_.begin(), heap_.end(), line_ + kLineFront);
    head_ = kLineFront;
    tail_ = kLineFront + static_cast<uint32_t>(heap_.size());
    heap_.clear();
    heap_mode_ = false;
  }
  return e;
}

bool EventEngine::compact() {
  const uint32_t n = tail_ - head_;
  if (n >= kLineMax) return false;
  std::copy(line_ + head_, line_ + tail_, line_ + kLineFront);
  head_ = kLineFront;
  tail_ = kLineFront + n;
  return true;
}

// step()'s body, inlined into run()'s loop: no call and no frame per event.
inline bool EventEngine::advance() {
  if (armed_ > 0) {
    Timer* tm = first_timer();
    const Event* next = next_event();
    if (!next || Before{}(tm->ev, *next)) {
      tm->armed = false;  // disarmed first: the handler may set it again
      --armed_;
      fire(tm->ev.time, tm->ev.handler, tm->ev.arg);  // read before the handler runs: it may set the timer
      return true;
    }
  }
  if (!heap_mode_) {
    if (head_ == tail_) {
      now_ = std::max(now_, horizon_);
      return false;
    }
    // The fields read out before the handler runs: it may schedule into this slot.
    const Event& e = line_[head_++];
    const double t = e.time;
    EventHandler* const handler = e.handler;
    const uint64_t arg = e.arg;
    if (head_ == tail_) head_ = tail_ = kLineFront;  // empty: room again before the first
    fire(t, handler, arg);
    return true;
  }
  if (heap_.empty()) {
    now_ = std::max(now_, horizon_);
    return false;
  }
  const Event e = heap_pop();
  fire(e.time, e.handler, e.arg);
  return true;
}

bool EventEngine::step() {
  return advance();
}

void EventEngine::run() {
  while (advance()) {
  }
}

void EventEngine::run_until(double t) {
  for (;;) {
    Timer* tm = armed_ > 0 ? first_timer() : nullptr;
    const Event* ev = next_event();
    const bool timer_next = tm && (!ev || Before{}(tm->ev, *ev));
    const double next = timer_next ? tm->ev.time : ev ? ev->time : t;
    if ((!timer_next && !ev) || next > t) break;
    step();
  }
  now_ = std::max(now_, t);
}

}  // namespace moesim::sim
