// The edge-cluster simulation at Prism's largest scale (Accelerating Edge Inference for Distributed MoE
// Models with Latency-Optimized Expert Placement, §IV-C, Fig. 8: up to 256 GPUs): 64 servers x 4 GPUs
// (desktop-rtx4090 profile, 6 GiB for experts each), DeepSeek-V2-Lite (26 MoE layers x 64 experts, top-6),
// a full mesh at 500 Mbit/s and 1 ms, Poisson arrivals every 8 s per server for 30 simulated minutes
// (about 14,400 requests), `prism` placement, migration checks every 5 minutes. Each server's traces are
// 16 task-skewed sequences (32 prompt and 20 generated tokens) built in setup: per server its own Zipf(1.1)
// popularity over a seeded permutation of each layer's experts. The target is under a minute on one core.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "base/rng.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "harness/cluster/cluster_job.h"
#include "serving/cluster_serving.h"
#include "traces/trace.h"

namespace {

using namespace moesim;

constexpr uint32_t kServers = 64, kGpusPerServer = 4, kSequences = 16, kPrompt = 32, kDecode = 20;

// top_k distinct experts of one layer, drawn by popularity (cumulative weights over the server's
// permutation).
void draw(Rng& rng, const std::vector<double>& cum, const std::vector<uint32_t>& perm, uint32_t k,
          std::vector<uint32_t>& out) {
  out.clear();
  while (out.size() < k) {
    const double u = rng.uniform() * cum.back();
    const auto e = perm[static_cast<size_t>(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin())];
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
}

traces::Trace server_trace(const ModelSpec& m, uint32_t server) {
  traces::TraceInfo info;
  info.model = m.name;
  info.layers = m.moe_layers;
  info.experts = m.routed_experts;
  info.top_k = m.top_k;
  traces::TraceBuilder b(info, false, false, "bench");
  Rng rng = Rng(42).split(server);
  std::vector<std::vector<uint32_t>> perm(m.moe_layers, std::vector<uint32_t>(m.routed_experts));
  for (auto& p : perm) {
    std::iota(p.begin(), p.end(), 0u);
    for (uint32_t i = m.routed_experts - 1; i > 0; --i) std::swap(p[i], p[rng.below(i + 1)]);
  }
  std::vector<double> cum(m.routed_experts);
  for (uint32_t r = 0; r < m.routed_experts; ++r) cum[r] = (r ? cum[r - 1] : 0) + 1 / std::pow(r + 1.0, 1.1);
  std::vector<uint32_t> experts;
  uint64_t line = 0;
  for (uint32_t s = 0; s < kSequences; ++s)
    for (uint32_t phase = 0; phase < 2; ++phase)
      for (uint32_t step = 0; step < (phase ? kDecode : kPrompt); ++step)
        for (uint32_t l = 0; l < m.moe_layers; ++l) {
          draw(rng, cum, perm[l], m.top_k, experts);
          b.add(s, static_cast<traces::Phase>(phase), step, l, experts, {}, {}, ++line);
        }
  return std::move(b).finish();
}

serving::ClusterInput cluster() {
  serving::ClusterInput in;
  in.model = load_model(std::string(MOESIM_SOURCE_DIR) + "/data/models/deepseek-v2-lite.json");
  const HardwareProfile hw =
      load_hardware(std::string(MOESIM_SOURCE_DIR) + "/data/hardware/desktop-rtx4090.json");
  for (uint32_t n = 0; n < kServers; ++n) {
    serving::ClusterServer s;
    s.name = "s" + std::to_string(n);
    s.hw = hw;
    s.gpus = kGpusPerServer;
    s.gpu_memory = uint64_t{6} << 30;
    s.traces.push_back(server_trace(in.model, n));
    s.arrival = {ArrivalSpec::Kind::kPoisson, 8.0, {}, "poisson:8s", ""};
    in.servers.push_back(std::move(s));
  }
  for (uint32_t a = 0; a < kServers; ++a)
    for (uint32_t b = a + 1; b < kServers; ++b) in.links.push_back({a, b, {500e6 / 8, 1e-3}});
  return in;
}

void BM_Cluster256Gpus30Min(benchmark::State& state) {
  const serving::ClusterInput in = cluster();
  serving::ClusterOptions opt;
  opt.placement = "prism";
  opt.duration_s = 1800;
  opt.migrate_every_s = 300;
  uint64_t requests = 0, events = 0;
  for (auto _ : state) {
    const serving::ClusterResult r = harness::simulate_cluster(in, opt);
    requests = r.requests.size();
    events = r.events;
    benchmark::DoNotOptimize(r.end_s);
  }
  state.counters["requests"] = static_cast<double>(requests);
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK(BM_Cluster256Gpus30Min)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
