// `moesim run --system offload` on a 100,000-token synthetic DeepSeek-V2-Lite trace (target < 30 s).
// The trace is generated here with TraceBuilder and moesim::Rng (independent Zipf popularity per layer,
// exponent 1.0, a seeded random expert permutation per layer): 100 sequences x (100 prompt tokens + 900
// decode tokens). The timed part is exactly what `moesim run` does after loading: build the lookup
// stream and run the pipeline on the simulated platform (harness::run_simulated). Set MOESIM_BENCH_SAVE_TRACE
// to a path to also write the trace as .mtr (to time the CLI end to end on it), and
// MOESIM_BENCH_RUN_SEQUENCES to a smaller count of sequences for the long tier's smoke run (bench_run_smoke:
// every benchmark still runs, on a trace too short to time).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "base/rng.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "harness/sim_runner.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"
#include "traces/trace_io.h"

namespace {

using namespace moesim;

constexpr uint32_t kPrompt = 100, kDecode = 900;

uint32_t sequences() {  // 100 (100,000 tokens) unless MOESIM_BENCH_RUN_SEQUENCES says otherwise
  static const uint32_t n = [] {
    const char* p = std::getenv("MOESIM_BENCH_RUN_SEQUENCES");
    if (p == nullptr) return 100u;
    char* end = nullptr;
    const unsigned long v = std::strtoul(p, &end, 10);
    if (*p == '\0' || *end != '\0' || v == 0 || v > 100000) {
      std::fprintf(stderr,
                   "bench_run: MOESIM_BENCH_RUN_SEQUENCES=%s: not a count of sequences in [1, 100000]\n", p);
      std::exit(2);
    }
    return static_cast<uint32_t>(v);
  }();
  return n;
}

traces::Trace make_trace() {
  const ModelSpec m = load_model("deepseek-v2-lite");
  traces::TraceInfo info;
  info.model = m.name;
  info.layers = m.moe_layers;
  info.experts = m.routed_experts;
  info.top_k = m.top_k;
  info.expert_bytes.assign(m.moe_layers, m.bytes_per_expert());
  info.synthetic = true;
  info.provenance = {{"generator", "bench/run_bench.cpp zipf"}, {"exponent", 1.0}, {"seed", 7}};
  Rng rng(7);
  // Per layer: cumulative Zipf(1.0) over a random permutation of the experts.
  std::vector<std::vector<double>> cdf(info.layers);
  std::vector<std::vector<uint32_t>> perm(info.layers);
  for (uint32_t l = 0; l < info.layers; ++l) {
    perm[l].resize(info.experts);
    std::iota(perm[l].begin(), perm[l].end(), 0u);
    for (uint32_t i = info.experts; i > 1; --i) std::swap(perm[l][i - 1], perm[l][rng.below(i)]);
    double s = 0;
    for (uint32_t r = 0; r < info.experts; ++r) cdf[l].push_back(s += 1.0 / (r + 1.0));
    for (double& c : cdf[l]) c /= s;
  }
  traces::TraceBuilder b(info, false, false, "run_bench");
  std::vector<uint32_t> pick;
  auto add = [&](uint32_t seq, traces::Phase ph, uint32_t step, uint32_t l) {
    pick.clear();
    while (pick.size() < info.top_k) {  // top-k distinct experts, Zipf-weighted
      const double u = rng.uniform();
      const auto r =
          static_cast<uint32_t>(std::lower_bound(cdf[l].begin(), cdf[l].end(), u) - cdf[l].begin());
      const uint32_t e = perm[l][std::min(r, info.experts - 1)];
      if (std::find(pick.begin(), pick.end(), e) == pick.end()) pick.push_back(e);
    }
    b.add(seq, ph, step, l, pick, {}, {}, 0);
  };
  for (uint32_t s = 0; s < sequences(); ++s) {
    for (uint32_t l = 0; l < info.layers; ++l)
      for (uint32_t t = 0; t < kPrompt; ++t) add(s, traces::Phase::kPrefill, t, l);
    for (uint32_t t = 0; t < kDecode; ++t)
      for (uint32_t l = 0; l < info.layers; ++l) add(s, traces::Phase::kDecode, t, l);
  }
  return std::move(b).finish();
}

const traces::Trace& trace() {
  static const traces::Trace t = [] {
    traces::Trace tr = make_trace();
    if (const char* p = std::getenv("MOESIM_BENCH_SAVE_TRACE")) traces::save_mtr(tr, p);
    return tr;
  }();
  return t;
}

// system: "offload" or "zipmoe" (planned pools, Alg. 1 scheduler); policy: the eviction spec (empty: the
// system's default). ops_per_cpu_s is the figure the issue tracks (>= 8 M simulated ops per CPU-second).
void BM_Run(benchmark::State& state, const char* system, const char* policy) {
  const traces::Trace& t = trace();
  const ModelSpec m = load_model("deepseek-v2-lite");
  const auto costs = serving::model_costs(t.info(), m);
  const HardwareProfile hw = load_hardware("jetson-agx-orin-64gb");
  serving::SystemConfig cfg;
  cfg.system = PolicySpec::parse(system);
  if (*policy) cfg.eviction = PolicySpec::parse(policy);  // else the empty spec: the system's default
  cfg.budget = CacheCapacity::parse("4GiB");
  double hit = 0, tpot = 0, ops = 0;
  for (auto _ : state) {
    const auto stream = traces::build_lookup_stream(t, 1);
    const auto r = harness::run_simulated(cfg, stream, t.info(), costs, hw);
    hit = static_cast<double>(r.result.cache.hits) / static_cast<double>(r.result.cache.lookups);
    double sum = 0;
    size_t n = 0;
    for (const auto& s : r.result.steps)
      if (s.phase == 1) sum += s.end - s.start, ++n;
    tpot = sum / static_cast<double>(n);
    state.counters["ops"] = static_cast<double>(r.result.ops);
    ops = static_cast<double>(r.result.ops);
  }
  // Simulated ops per CPU-second of the whole timed part (stream + pipeline).
  state.counters["ops_per_cpu_s"] = benchmark::Counter(ops, benchmark::Counter::kIsRate);
  state.counters["tokens"] = sequences() * (kPrompt + kDecode);
  state.counters["records"] = static_cast<double>(t.records());
  state.counters["hit_rate"] = hit;
  state.counters["sim_tpot_ms"] = tpot * 1e3;
}
BENCHMARK_CAPTURE(BM_Run, offload_lru, "offload", "lru")->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Run, offload_belady, "offload", "belady")->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Run, zipmoe, "zipmoe", "")->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
