// ZipMoE Alg. 3's makespan estimate against the simulated sparse layer (the Part 2 test): random
// hit patterns h = (hF, hC, hS, hE) of k experts, each run as one layer invocation on the simulated Jetson
// AGX Orin 64GB with ZipMoE's DAGs (Fig. 6) and scheduler (Alg. 1). Alg. 3 estimates the I/O and
// decompression phase only (no recovery, no expert compute), so the simulated figure is the time from the
// dense op's end to the last SSD read or decompression's end. The error distribution is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "base/rng.h"
#include "core/planning.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "policies/planning/zipmoe_planner.h"
#include "serving/zipmoe_loads.h"
#include "sim/sim_platform.h"
#include "tests/core/tiny_workload.h"

namespace moesim {
namespace {

// A residency answering a fixed state per expert (no admissions: every layer starts from the same pattern).
class FixedStates final : public Residency {
 public:
  explicit FixedStates(std::vector<ExpertState> s) : s_(std::move(s)) {}
  std::vector<PoolInfo> pools() const override { return {}; }
  std::string name() const override { return "fixed"; }
  void begin_invocation(uint32_t, bool) override {}
  LookupResult lookup(uint32_t key, uint32_t, uint32_t) override { return {s_[key], MemoryTier::kUnified}; }
  void refresh(uint32_t) override {}
  void end_invocation(uint32_t) override {}
  ExpertState prefetch(uint32_t, uint32_t key, uint32_t, ExpertState* t) override { return *t = s_[key]; }
  LookupResult peek(uint32_t key) const override { return {s_[key], MemoryTier::kUnified}; }
  CacheCounters counters() const override { return {}; }
  uint64_t capacity_experts() const override { return 0; }

 private:
  std::vector<ExpertState> s_;
};

TEST(ZipMoeEstimate, Alg3AgainstTheSimulatedLayer) {
  const HardwareProfile hw = load_hardware("jetson-agx-orin-64gb");
  const uint32_t k = 8, experts = 16, tensors = 3;
  TensorLayout layout;
  layout.compressed = true;
  layout.shards = 4;
  layout.e_ratio = kGaussianBf16ExponentRatio;
  const char* scheduler =
      SchedulingRegistry::instance().names().find("zipmoe") != std::string::npos ? "zipmoe" : "fcfs";
  Rng rng(2024);
  std::vector<double> errors;
  for (int trial = 0; trial < 200; ++trial) {
    // One invocation of k experts with random states.
    std::vector<uint32_t> keys(k);
    for (uint32_t i = 0; i < k; ++i) keys[i] = i;
    test::TinyWorkload w({{keys}}, {"gate_proj", "up_proj", "down_proj"});
    w.set_shape(1, experts);
    w.costs.expert_bytes = {9u << 20};  // a Qwen3-30B-A3B BF16 expert: 3 tensors of 3 MiB
    w.costs.expert_flops_per_token = 2.0 * (9u << 20) / 2;
    std::vector<ExpertState> st(experts, ExpertState::kMissed);
    std::array<uint32_t, kPools> h{};
    for (uint32_t i = 0; i < k; ++i) {
      const auto pick = static_cast<int>(rng.below(5));  // F, C, S, E or M
      if (pick < 4) ++h[pick];
      st[i] = pick == 0   ? ExpertState::kFull
              : pick == 1 ? ExpertState::kCompressed
              : pick == 2 ? ExpertState::kSM
              : pick == 3 ? ExpertState::kE
                          : ExpertState::kMissed;
    }
    FixedStates residency(st);
    auto routing = make_routing_policy("identity", RoutingSetup{1, experts, k});
    auto sched = make_scheduling_policy(scheduler);
    PipelineOptions po;
    po.loads = serving::zipmoe_loads(layout, false);
    po.record_timeline = true;
    Pipeline p(w.costs, po, residency, *routing, *sched);
    sim::SimPlatform platform(hw);
    const PipelineResult r = p.run(w.view(), platform);
    double dense_end = 0, phase_end = 0;
    for (const auto& e : r.timeline) {
      if (e.op.kind == OpKind::kDenseCompute) dense_end = e.timing.end;
      if (e.op.kind == OpKind::kSsdRead || e.op.kind == OpKind::kDecompress)
        phase_end = std::max(phase_end, e.timing.end);
    }
    const PlanDelays d = zipmoe_plan_delays(platform, (9u << 20) / 3, layout, hw.cpu_cores, tensors);
    const double estimate = zipmoe_makespan_estimate(k, h, d);
    const double simulated = std::max(0.0, phase_end - dense_end);
    if (simulated <= 0) {  // all F: nothing to read or decompress
      EXPECT_EQ(estimate, 0);
      continue;
    }
    errors.push_back(estimate / simulated - 1);
  }
  ASSERT_GT(errors.size(), 100u);
  std::sort(errors.begin(), errors.end());
  auto at = [&](double q) { return errors[static_cast<size_t>(q * static_cast<double>(errors.size() - 1))]; };
  std::printf(
      "Alg. 3 estimate / simulated I/O+decompression phase - 1 over %zu random layers (scheduler %s): "
      "min %+.3f p10 %+.3f median %+.3f p90 %+.3f max %+.3f\n",
      errors.size(), scheduler, errors.front(), at(0.1), at(0.5), at(0.9), errors.back());
  // The estimate is a bound-style approximation (max of two workloads); it must stay in the right range.
  EXPECT_GT(at(0.5), -0.5);
  EXPECT_LT(at(0.5), 0.5);
}

}  // namespace
}  // namespace moesim
