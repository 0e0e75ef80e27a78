// Event-engine throughput (sim/event_queue.h): the classic "hold" model -- a fixed population of
// pending events; each fired event schedules one new event a random delay later, so the queue size
// stays constant. Target: >= 5 million events per second with 10^4 pending events.
#include <benchmark/benchmark.h>

#include <vector>

#include "base/rng.h"
#include "sim/event_queue.h"

namespace {

using moesim::sim::EventEngine;
using moesim::sim::EventHandler;

class Hold : public EventHandler {
 public:
  Hold(EventEngine& e, std::vector<double> delays) : engine_(e), delays_(std::move(delays)) {}
  void on_event(uint64_t arg) override {
    engine_.schedule(engine_.now() + delays_[next_++ & (delays_.size() - 1)], this, arg);
  }

 private:
  EventEngine& engine_;
  std::vector<double> delays_;
  size_t next_ = 0;
};

void BM_EventHold(benchmark::State& state) {
  const auto pending = static_cast<size_t>(state.range(0));
  moesim::Rng rng(42);
  std::vector<double> delays(1 << 16);
  for (double& d : delays) d = rng.uniform() * 1e-3;  // exponential-free: uniform delays keep it cheap
  EventEngine engine;
  Hold hold(engine, delays);
  for (size_t i = 0; i < pending; ++i) engine.schedule(rng.uniform() * 1e-3, &hold, i);
  const uint64_t before = engine.fired();
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) engine.step();
  }
  state.SetItemsProcessed(static_cast<int64_t>(engine.fired() - before));
  state.counters["pending"] = static_cast<double>(engine.pending());
}
BENCHMARK(BM_EventHold)->Arg(100)->Arg(10'000)->Arg(1'000'000);

// Ties: every event at the same time (the sequence number alone orders them).
void BM_EventTies(benchmark::State& state) {
  EventEngine engine;
  std::vector<double> zero(1, 0.0);
  Hold hold(engine, zero);
  for (size_t i = 0; i < 10'000; ++i) engine.schedule(0.0, &hold, i);
  const uint64_t before = engine.fired();
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) engine.step();
  }
  state.SetItemsProcessed(static_cast<int64_t>(engine.fired() - before));
}
BENCHMARK(BM_EventTies);

}  // namespace

BENCHMARK_MAIN();
