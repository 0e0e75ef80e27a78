#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/interrupt.h"

namespace moesim::sim {
namespace {

class Recorder : public EventHandler {
 public:
  explicit Recorder(EventEngine& e) : engine(e) {}
  void on_event(uint64_t arg) override { log.push_back({engine.now(), arg}); }
  EventEngine& engine;
  std::vector<std::pair<double, uint64_t>> log;
};

TEST(EventEngine, FiresInTimeOrder) {
  EventEngine e;
  Recorder r(e);
  e.schedule(3.0, &r, 3);
  e.schedule(1.0, &r, 1);
  e.schedule(2.0, &r, 2);
  e.run();
  ASSERT_EQ(r.log.size(), 3u);
  EXPECT_EQ(r.log[0], std::make_pair(1.0, uint64_t{1}));
  EXPECT_EQ(r.log[1], std::make_pair(2.0, uint64_t{2}));
  EXPECT_EQ(r.log[2], std::make_pair(3.0, uint64_t{3}));
  EXPECT_EQ(e.now(), 3.0);
  EXPECT_EQ(e.fired(), 3u);
}

TEST(EventEngine, SimultaneousEventsFireInSchedulingOrder) {
  EventEngine e;
  Recorder r(e);
  // Many ties interleaved with other times: a heap alone would not keep their order.
  for (uint64_t i = 0; i < 200; ++i) e.schedule(i % 3 == 0 ? 5.0 : 1.0 + static_cast<double>(i % 7), &r, i);
  e.run();
  std::vector<uint64_t> at5;
  for (const auto& [t, a] : r.log)
    if (t == 5.0) at5.push_back(a);
  for (size_t i = 1; i < at5.size(); ++i) EXPECT_LT(at5[i - 1], at5[i]);
  for (size_t i = 1; i < r.log.size(); ++i) {
    EXPECT_LE(r.log[i - 1].first, r.log[i].first);
    if (r.log[i - 1].first == r.log[i].first) {
      EXPECT_LT(r.log[i - 1].second, r.log[i].second);
    }
  }
}

TEST(EventEngine, EventsScheduledFromCallbacksAtTheSameTimeRunAfterPendingTies) {
  EventEngine e;
  std::vector<std::string> order;
  e.schedule_fn(1.0, [&] {
    order.push_back("a");
    e.schedule_fn(1.0, [&] { order.push_back("c (scheduled by a)"); });
  });
  e.schedule_fn(1.0, [&] { order.push_back("b"); });
  e.run();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c (scheduled by a)"}));
}

TEST(EventEngine, PastTimesAreClampedAndRunUntilStops) {
  EventEngine e;
  std::vector<double> times;
  e.schedule_fn(2.0, [&] {
    times.push_back(e.now());
    e.schedule_fn(1.0, [&] { times.push_back(e.now()); });  // in the past: runs at now
  });
  e.schedule_fn(10.0, [&] { times.push_back(e.now()); });
  e.run_until(5.0);
  EXPECT_EQ(times, (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(e.now(), 5.0);
  EXPECT_EQ(e.pending(), 1u);
  e.run();
  EXPECT_EQ(times.back(), 10.0);
  EXPECT_FALSE(e.step());
}

// Schedules itself again forever: a run that only an interrupt request ends.
class Forever : public EventHandler {
 public:
  explicit Forever(EventEngine& e) : engine(e) {}
  void on_event(uint64_t arg) override {
    ++fired;
    engine.schedule(engine.now() + 1, this, arg);
  }
  EventEngine& engine;
  uint64_t fired = 0;
};

TEST(EventEngine, AnInterruptRequestStopsARunWithin4096Events) {
  EventEngine e;
  Forever f(e);
  e.schedule(0, &f, 0);
  e.run_until(10000);  // no request: nothing stops it
  EXPECT_EQ(f.fired, 10001u);
  request_interrupt();
  EXPECT_THROW(e.run(), Interrupted);
  clear_interrupt();
  EXPECT_GT(f.fired, 10001u);
  EXPECT_LE(f.fired, 10001u + 4096u);
}

}  // namespace
}  // namespace moesim::sim
