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

bool EventEngine::step() {
  if (heap_.empty()) return false;
  const Event e = quad_heap_pop(heap_, Before{});
  now_ = e.time;
  if ((++fired_ & 0xFFF) == 0) interrupt_point();  // every 4096 events: well under a millisecond of work
  e.handler->on_event(e.arg);
  return true;
}

void EventEngine::run() {
  while (step()) {
  }
}

void EventEngine::run_until(double t) {
  while (!heap_.empty() && heap_.front().time <= t) step();
  now_ = std::max(now_, t);
}

}  // namespace moesim::sim
