#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
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

// While few events are pending they wait in a sorted line: a tie with the last goes after it, an event
// before the first goes before it (ties with the first after it), and one in between after its ties.
TEST(EventEngine, TheSortedLineKeepsTimeThenSchedulingOrder) {
  EventEngine e;
  Recorder r(e);
  e.schedule(2.0, &r, 1);  // an empty engine
  e.schedule(2.0, &r, 2);  // a tie with the last: appended
  e.schedule(1.0, &r, 3);  // before the first: prepended
  e.schedule(1.0, &r, 4);  // a tie with the first: after it
  e.schedule(3.0, &r, 5);
  EXPECT_EQ(e.pending(), 5u);
  ASSERT_TRUE(e.step());   // fires 3; the line holds 4, 1, 2, 5
  e.schedule(1.5, &r, 6);  // between 4 and 1
  e.schedule(1.0, &r, 7);  // a tie with the first (4), scheduled later: after it
  e.run();
  std::vector<uint64_t> order;
  for (const auto& [t, a] : r.log) order.push_back(a);
  EXPECT_EQ(order, (std::vector<uint64_t>{3, 4, 7, 6, 1, 2, 5}));
  EXPECT_EQ(e.pending(), 0u);
}

// Each event earlier than every pending one: the first are prepended into the room before the line's first
// slot, and once that room is used up the line shifts up to put the next one first, reading and writing
// nothing before the line. The engine sits after a guard of large times, so a read before the line takes a
// guard value for a later event and a write lands in the guard: both show here, not only under a memory
// checker.
TEST(EventEngine, EarlierAndEarlierEventsPastTheLinesFrontRoomFireInTimeOrder) {
  struct Guarded {
    double guard[16];
    EventEngine engine;
  };
  auto g = std::make_unique<Guarded>();
  std::fill(std::begin(g->guard), std::end(g->guard), 1e300);
  EventEngine& e = g->engine;
  Recorder r(e);
  for (uint64_t i = 0; i < 40; ++i) e.schedule(1000.0 - static_cast<double>(i), &r, i);
  ASSERT_EQ(e.pending(), 40u);
  for (double v : g->guard) ASSERT_EQ(v, 1e300);  // before run(): a corrupted line would fire garbage
  e.run();
  ASSERT_EQ(r.log.size(), 40u);
  for (uint64_t i = 0; i < 40; ++i) {
    EXPECT_EQ(r.log[i].second, 39 - i) << i;
    EXPECT_EQ(r.log[i].first, 961.0 + static_cast<double>(i)) << i;
  }
}

// The queue against a sorted reference, step by step, while the pending count swings between a handful
// (the sorted line, its slots used up and moved down many times) and a few hundred (the heap, and back to
// the line below its threshold): every step fires the reference's first (time, scheduling order).
TEST(EventEngine, TheLineAndTheHeapFireAsASortedReference) {
  EventEngine e;
  Recorder r(e);
  std::mt19937_64 rng(7);
  std::set<std::tuple<double, uint64_t>> ref;  // (time, id); ids are given in scheduling order
  uint64_t id = 0;
  auto push = [&] {
    // Ties (half-unit times), events before every pending one (lead 0) and after every one.
    const double t = e.now() + 0.5 * static_cast<double>(rng() % 12);
    ref.insert({t, id});
    e.schedule(t, &r, id++);
  };
  auto pop = [&] {
    ASSERT_TRUE(e.step());
    ASSERT_EQ(r.log.back(), std::make_pair(std::get<0>(*ref.begin()), std::get<1>(*ref.begin())));
    ref.erase(ref.begin());
  };
  for (size_t target : {3, 10, 70, 5, 300, 12, 40, 1, 150, 0}) {
    for (int churn = 0; churn < 500; ++churn) {  // about `target` pending: pushes and pops interleaved
      if (ref.size() < target || (ref.size() == target && rng() % 2 == 0)) {
        push();
      } else if (!ref.empty()) {
        pop();
      }
      ASSERT_EQ(e.pending(), ref.size());
    }
  }
  while (!ref.empty()) pop();
  EXPECT_FALSE(e.step());
  EXPECT_GT(id, 2000u);
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

// The heap against a reference that sorts by (time, scheduling order): events scheduled up front and from
// callbacks, at a few distinct times (many ties) and in the past (clamped to now), fire in exactly the
// reference's order, whatever the heap's shape.
class Spawner : public EventHandler {
 public:
  Spawner(EventEngine& e, std::vector<double>& times) : engine(e), times_(times) {}
  void on_event(uint64_t arg) override {
    fired.push_back(arg);
    // Each event with an even id schedules two more, until `budget` ids are used.
    for (int k = 0; k < 2 && (arg & 1) == 0 && next_ < times_.size(); ++k) {
      const uint64_t id = next_++;
      scheduled.push_back({std::max(times_[id], engine.now()), id});
      engine.schedule(times_[id], this, id);
    }
  }
  EventEngine& engine;
  std::vector<double>& times_;
  size_t next_ = 0;
  std::vector<uint64_t> fired;
  std::vector<std::pair<double, uint64_t>> scheduled;  // (clamped time, id) in scheduling order
};

TEST(EventEngine, FiresInTheOrderOfASortByTimeThenSchedulingOrder) {
  std::vector<double> times;
  uint64_t x = 12345;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    times.push_back(static_cast<double>((x >> 33) % 50) * 0.25);  // 50 distinct times: many ties
  }
  EventEngine e;
  Spawner s(e, times);
  for (; s.next_ < 300; ++s.next_) {
    s.scheduled.push_back({times[s.next_], s.next_});
    e.schedule(times[s.next_], &s, s.next_);
  }
  size_t max_pending = 0;
  while (e.step()) max_pending = std::max(max_pending, e.pending());
  ASSERT_EQ(s.fired.size(), s.scheduled.size());
  EXPECT_GT(max_pending, 100u);  // the heap had depth, not a handful of events
  // The reference: a discrete-event run keeps (time, seq) order among the events pending at each step; an
  // event scheduled later never fires before an earlier-scheduled one at the same time, and times never
  // decrease.
  std::vector<double> fired_time(times.size(), -1);
  std::vector<size_t> order(times.size(), 0);
  for (size_t i = 0; i < s.scheduled.size(); ++i) order[s.scheduled[i].second] = i;
  for (const auto& [t, id] : s.scheduled) fired_time[id] = t;
  for (size_t i = 1; i < s.fired.size(); ++i) {
    const uint64_t a = s.fired[i - 1], b = s.fired[i];
    ASSERT_LE(fired_time[a], fired_time[b]) << "event " << i;
    if (fired_time[a] == fired_time[b]) {
      ASSERT_LT(order[a], order[b]) << "event " << i;
    }
  }
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

// A random program of ordinary events and one re-settable event, run two ways: (a) as a timer, each
// replaced setting told to reach(); (b) every setting a new event, replaced ones firing and ignored (what the
// SSD did before timers). Both must fire the same events in the same order at the same times and end at the
// same clock.
template <bool kTimer>
class TimerProgram : public EventHandler {
 public:
  TimerProgram(EventEngine& e, uint64_t seed) : engine(e), rng(seed) {
    if (kTimer) timer = e.add_timer(this);
  }
  void on_event(uint64_t arg) override {
    const bool is_timer = arg & kTimerBit;
    if (is_timer && !kTimer && (arg & ~kTimerBit) != generation) return;  // (b): replaced, stale
    log.push_back({engine.now(), arg});
    if (is_timer) armed = false;
    if (++fired > 3000) return;
    const int ordinary = 1 + static_cast<int>(rng() % 2);  // 1.5 per firing: the program grows
    for (int k = 0; k < ordinary; ++k)
      engine.schedule(engine.now() + static_cast<double>(rng() % 4), this, next_id++);
    switch (rng() % 4) {
      case 0:
      case 1:
        set(engine.now() + static_cast<double>(rng() % 6));
        break;
      case 2:
        clear();
        break;
      default:
        break;
    }
  }
  void set(double t) {
    ++generation;
    if (kTimer) {
      if (engine.timer_armed(timer)) engine.reach(engine.timer_time(timer));
      engine.set_timer(timer, t, kTimerBit | generation);
    } else {
      engine.schedule(t, this, kTimerBit | generation);
    }
    armed = true;
  }
  void clear() {
    ++generation;
    if (kTimer) {
      if (engine.timer_armed(timer)) engine.reach(engine.timer_time(timer));
      engine.clear_timer(timer);
    }
    armed = false;
  }
  static constexpr uint64_t kTimerBit = 1ull << 63;
  EventEngine& engine;
  std::mt19937_64 rng;
  uint32_t timer = 0;
  uint64_t generation = 0, next_id = 0, fired = 0;
  bool armed = false;
  std::vector<std::pair<double, uint64_t>> log;
};

TEST(EventEngine, ATimerFiresAsNewEventsWithTheReplacedOnesIgnored) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    EventEngine ea, eb;
    TimerProgram<true> a(ea, seed);
    TimerProgram<false> b(eb, seed);
    for (int k = 0; k < 5; ++k) {
      ea.schedule(static_cast<double>(k), &a, a.next_id++);
      eb.schedule(static_cast<double>(k), &b, b.next_id++);
    }
    a.set(2.0);
    b.set(2.0);
    ea.run();
    eb.run();
    ASSERT_EQ(a.log, b.log) << "seed " << seed;
    EXPECT_GT(a.log.size(), 3000u);
    EXPECT_EQ(ea.now(), eb.now()) << "seed " << seed;
    EXPECT_EQ(ea.pending(), 0u);
  }
}

TEST(EventEngine, RunUntilStopsAtATimerLaterThanItsTime) {
  EventEngine e;
  Recorder r(e);
  const uint32_t t = e.add_timer(&r);
  e.set_timer(t, 5.0, 7);
  e.schedule(1.0, &r, 1);
  EXPECT_EQ(e.pending(), 2u);
  e.run_until(4.0);
  ASSERT_EQ(r.log.size(), 1u);
  EXPECT_EQ(e.now(), 4.0);
  e.set_timer(t, 4.5, 8);  // moved: the setting at 5 never fires
  e.run();
  ASSERT_EQ(r.log.size(), 2u);
  EXPECT_EQ(r.log[1], std::make_pair(4.5, uint64_t{8}));
}

// Two timers (two SSDs): the earlier setting fires first, a tie in setting order, each among the ordinary
// events by (time, sequence number).
TEST(EventEngine, TwoTimersFireInTimeThenSettingOrder) {
  EventEngine e;
  Recorder r(e);
  const uint32_t a = e.add_timer(&r), b = e.add_timer(&r);
  e.set_timer(a, 3.0, 1);
  e.set_timer(b, 2.0, 2);
  e.schedule(2.5, &r, 3);
  e.schedule(2.0, &r, 4);  // a tie with b's setting, scheduled after it
  e.run();
  e.set_timer(b, 5.0, 5);  // a tie of the two timers: b was set first
  e.set_timer(a, 5.0, 6);
  e.run();
  std::vector<uint64_t> order;
  for (const auto& [t, arg] : r.log) order.push_back(arg);
  EXPECT_EQ(order, (std::vector<uint64_t>{2, 4, 3, 1, 5, 6}));
  EXPECT_EQ(e.now(), 5.0);
}

}  // namespace
}  // namespace moesim::sim
