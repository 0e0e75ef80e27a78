// Replay fast-path throughput (replay/cache_replay.h): lookups per second of one eviction policy,
// single-threaded, on a ~10-million-lookup stream made by tiling the bundled real Qwen3-30B-A3B route trace
// (48 layers x 128 experts = 6,144 keys). Tiling repeats the trace's lookup stream (prefill pass, then
// decode) back to back, as if the same request were served again and again, and recomputes next_use across
// the tiles.
//
//   ./build/bench/bench_replay --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Rates are per CPU second of the benchmark thread (Google Benchmark's default CPU timer): the shared
// development machine is oversubscribed, so wall time would measure the other processes, not the replay.
//
// Capacities: 25% and 50% of the distinct keys (32 and 64 experts per layer; global scope: one cache of
// 1,536 or 3,072 experts). Results and the libCacheSim comparison: bench/results/replay.md.
//
// Miss-ratio curves (replay/mrc.h): `mrc/P/SCOPE/100caps` computes the curve at the 100 capacities 6..105
// experts per layer in one call (LRU: exact, by stack distances; FIFO: SHARDS at rate 0.1, 3 salts), against
// `replays/P/SCOPE/100caps`, which replays once per capacity; one iteration each (the replays take seconds):
//
//   ./build/bench/bench_replay --benchmark_filter='100caps'
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "core/eviction.h"
#include "replay/cache_replay.h"
#include "replay/mrc.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

namespace {

using namespace moesim;

constexpr size_t kTargetLookups = 10'000'000;

struct Fixture {
  traces::LookupStream stream;
  std::unique_ptr<replay::ReplayInput> input;
  uint32_t top_k = 0;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    const traces::Trace t =
        traces::load_trace(std::string(MOESIM_SOURCE_DIR) + "/data/traces/qwen3-30b-a3b.route.csv");
    const traces::LookupStream one = traces::build_lookup_stream(t);
    traces::LookupStream& s = x.stream;
    s.layers = one.layers;
    s.experts = one.experts;
    s.batch = one.batch;
    s.inv_begin.push_back(0);
    s.refresh_begin.push_back(0);
    s.step_begin.push_back(0);
    while (s.lookups() < kTargetLookups) {
      const uint32_t inv_off = static_cast<uint32_t>(s.invocations());
      const uint32_t key_off = static_cast<uint32_t>(s.lookups());
      const uint32_t refresh_off = static_cast<uint32_t>(s.refreshes());
      for (size_t i = 0; i < one.steps(); ++i) {
        s.step_phase.push_back(one.step_phase[i]);
        s.step_tokens.push_back(one.step_tokens[i]);
        s.step_begin.push_back(one.step_begin[i + 1] + inv_off);
      }
      for (size_t i = 0; i < one.invocations(); ++i) {
        s.inv_layer.push_back(one.inv_layer[i]);
        s.inv_phase.push_back(one.inv_phase[i]);
        s.inv_begin.push_back(one.inv_begin[i + 1] + key_off);
        s.refresh_begin.push_back(one.refresh_begin[i + 1] + refresh_off);
      }
      for (uint32_t r : one.refresh) s.refresh.push_back(r + key_off);
      s.key.insert(s.key.end(), one.key.begin(), one.key.end());
      s.tokens.insert(s.tokens.end(), one.tokens.begin(), one.tokens.end());
    }
    // next_use across the whole tiled stream (same backward scan as build_lookup_stream).
    s.next_use.assign(s.lookups(), traces::kNoNextUse);
    std::vector<uint32_t> next(size_t{s.layers} * s.experts, traces::kNoNextUse);
    for (size_t j = s.invocations(); j-- > 0;)
      for (uint32_t i = s.inv_begin[j]; i < s.inv_begin[j + 1]; ++i) {
        s.next_use[i] = next[s.key[i]];
        next[s.key[i]] = static_cast<uint32_t>(j);
      }
    x.top_k = t.info().top_k;
    x.input = std::make_unique<replay::ReplayInput>(x.stream, x.top_k, t.info().expert_bytes);
    return x;
  }();
  return f;
}

void BM_Replay(benchmark::State& state, const char* policy, CacheScope scope, uint64_t per_layer) {
  const Fixture& f = fixture();
  const replay::ReplayConfig rc{policy, scope, {CacheCapacity::Unit::kExperts, per_layer}};
  const CacheConfig cfg = f.input->cache_config(rc);
  uint64_t lookups = 0, hits = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto p = make_eviction_policy(policy, cfg);
    state.ResumeTiming();
    const CacheCounters c = p->replay(f.input->view());
    benchmark::DoNotOptimize(c.hits);
    lookups += c.lookups;
    hits = c.hits;
  }
  state.counters["lookups_per_s"] =
      benchmark::Counter(static_cast<double>(lookups), benchmark::Counter::kIsRate);
  state.counters["hit_pct"] = 100.0 * static_cast<double>(hits) / static_cast<double>(f.stream.lookups());
  state.counters["stream_lookups"] = static_cast<double>(f.stream.lookups());
}

std::vector<CacheCapacity> hundred_caps() {
  std::vector<CacheCapacity> caps;
  for (uint64_t n = 6; n < 106; ++n) caps.push_back({CacheCapacity::Unit::kExperts, n});
  return caps;
}

void BM_Mrc(benchmark::State& state, const char* policy, CacheScope scope) {
  const Fixture& f = fixture();
  const auto caps = hundred_caps();
  double hit_sum = 0;
  for (auto _ : state) {
    const replay::MrcResult m = EvictionRegistry::instance().entry(policy, "eviction").traits.recency_stack
                                    ? replay::lru_mrc(*f.input, scope, caps)
                                    : replay::shards_mrc(*f.input, policy, scope, caps, {0.1, 3});
    hit_sum = 0;
    for (const auto& r : m.points) hit_sum += r.hit_pct;
    benchmark::DoNotOptimize(hit_sum);
  }
  state.counters["mean_hit_pct"] = hit_sum / static_cast<double>(caps.size());
}

void BM_Replays(benchmark::State& state, const char* policy, CacheScope scope) {
  const Fixture& f = fixture();
  const auto caps = hundred_caps();
  double hit_sum = 0;
  for (auto _ : state) {
    hit_sum = 0;
    for (const auto& c : caps) hit_sum += replay::replay(*f.input, {policy, scope, c}).hit_pct;
    benchmark::DoNotOptimize(hit_sum);
  }
  state.counters["mean_hit_pct"] = hit_sum / static_cast<double>(caps.size());
}

void register_all() {
  for (const char* p : {"lru", "fifo"})
    for (CacheScope scope : {CacheScope::kGlobal, CacheScope::kPerLayer}) {
      const std::string tail = std::string("/") + p + "/" + scope_name(scope) + "/100caps";
      benchmark::RegisterBenchmark(("mrc" + tail).c_str(), BM_Mrc, p, scope)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
      benchmark::RegisterBenchmark(("replays" + tail).c_str(), BM_Replays, p, scope)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
    }
  for (const char* p : {"lru", "lfu", "fifo", "marking", "random", "belady", "static-freq"})
    for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
      for (uint64_t cap : {32, 64}) {
        const std::string name =
            std::string("replay/") + p + "/" + scope_name(scope) + "/" + (cap == 32 ? "25pct" : "50pct");
        benchmark::RegisterBenchmark(name.c_str(), BM_Replay, p, scope, cap)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.5);
      }
}

const bool registered = (register_all(), true);

}  // namespace

BENCHMARK_MAIN();
