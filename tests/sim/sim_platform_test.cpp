// A hand-computed timeline: the pipeline on the simulated platform, two layers, top-2, cold cache.
#include "sim/sim_platform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/routing.h"
#include "core/scheduling.h"
#include "serving/classic_residency.h"
#include "serving/pipeline.h"

namespace moesim::sim {
namespace {

// Round numbers: SSD 1 GB/s with 100 us per request; GPU 100 GB/s, 10 us per kernel; UMA link 5 us.
HardwareProfile test_profile(uint32_t queue_depth = 4) {
  Json j = {{"name", "test"},
            {"ssd", {{"read_bandwidth", "1GB/s"}, {"read_latency", "100us"}, {"queue_depth", queue_depth}}},
            {"memory", {{"capacity", "8GiB"}, {"bandwidth", "100GB/s"}, {"unified", true}}},
            {"cpu", {{"cores", 4}, {"memcpy_bandwidth_per_core", "10GB/s"}}},
            {"gpu", {{"bf16_flops", 1e14}, {"memory_bandwidth", "100GB/s"}, {"kernel_overhead", "10us"}}},
            {"link", {{"kind", "uma"}, {"bandwidth", "100GB/s"}, {"latency", "5us"}}}};
  return hardware_from_json(j, "test.json");
}

// One expert = one 1 MB tensor; 1 MFLOP per token (compute is memory-bound: 1 MB / 100 GB/s = 10 us,
// + 10 us launch = 20 us). Dense: 2 MB per layer -> 20 us + 10 us = 30 us.
ModelCosts test_costs() {
  ModelCosts c;
  c.expert_bytes = {1'000'000, 1'000'000};
  c.tensor_names = {"w"};
  c.tensor_share = {1.0};
  c.expert_flops_per_token = 1e6;
  c.dense_bytes = {2'000'000, 2'000'000};
  c.dense_flops_per_token = 1e6;
  return c;
}

// Two decode steps (1 token each) over 2 layers x 4 experts: step 0 uses {0,1} then {2,3} (cold);
// step 1 uses {0,1} in layer 0 again (hits) and {2,3} in layer 1 (hits).
struct TwoLayer {
  std::vector<uint32_t> step_begin{0, 2, 4};
  std::vector<uint8_t> step_phase{1, 1};
  std::vector<uint32_t> step_tokens{1, 1};
  std::vector<uint32_t> inv_begin{0, 2, 4, 6, 8};
  std::vector<uint16_t> inv_layer{0, 1, 0, 1};
  std::vector<uint8_t> inv_phase{1, 1, 1, 1};
  std::vector<uint32_t> key{0, 1, 6, 7, 0, 1, 6, 7};
  std::vector<uint32_t> tokens{1, 1, 1, 1, 1, 1, 1, 1};
  std::vector<uint32_t> next_use{
      2, 2, 3, 3, kNeverUsedAgain, kNeverUsedAgain, kNeverUsedAgain, kNeverUsedAgain};
  WorkloadView view() const {
    WorkloadView w;
    w.layers = 2;
    w.experts = 4;
    w.step_begin = step_begin;
    w.step_phase = step_phase;
    w.step_tokens = step_tokens;
    w.lookups.inv_begin = inv_begin;
    w.lookups.inv_layer = inv_layer;
    w.lookups.inv_phase = inv_phase;
    w.lookups.key = key;
    w.lookups.next_use = next_use;
    w.tokens = tokens;
    return w;
  }
};

PipelineResult run_two_layer(uint32_t io_depth, uint32_t first_step = 0, uint32_t last_step = UINT32_MAX,
                             SimOptions so = {}, uint64_t* major_faults = nullptr,
                             uint64_t* decode_faults = nullptr) {
  const ModelCosts costs = test_costs();
  CacheConfig cc = make_cache_config(2, 4, 2, CacheScope::kPerLayer,
                                     CacheCapacity{CacheCapacity::Unit::kExperts, 4}, costs.expert_bytes);
  auto cache = serving::make_classic_residency(PolicySpec::parse("lru"), cc, MemoryTier::kUnified, nullptr);
  auto routing = make_routing_policy("identity", RoutingSetup{2, 4, 2});
  auto scheduling = make_scheduling_policy("fcfs");
  PipelineOptions po;
  po.record_timeline = true;
  po.timeline_first_step = first_step;
  po.timeline_last_step = last_step;
  Pipeline p(costs, po, *cache, *routing, *scheduling);
  so.io_depth = io_depth;
  SimPlatform platform(test_profile(), so);
  TwoLayer w;
  PipelineResult r = p.run(w.view(), platform);
  if (major_faults) *major_faults = platform.major_faults();
  if (decode_faults) *decode_faults = platform.decode_major_faults();
  return r;
}

// (kind, layer, expert) -> (start, end) in microseconds, for the first step.
std::map<std::tuple<OpKind, int, int>, std::pair<double, double>> times_us(const PipelineResult& r,
                                                                           uint32_t step) {
  std::map<std::tuple<OpKind, int, int>, std::pair<double, double>> m;
  for (const auto& e : r.timeline)
    if (e.step == step)
      m[{e.op.kind, e.op.layer, e.op.expert == kNoLabel ? -1 : e.op.expert}] = {e.timing.start * 1e6,
                                                                                e.timing.end * 1e6};
  return m;
}

void expect_span(const std::map<std::tuple<OpKind, int, int>, std::pair<double, double>>& m, OpKind k,
                 int layer, int expert, double start, double end) {
  auto it = m.find({k, layer, expert});
  ASSERT_NE(it, m.end()) << op_kind_name(k) << " L" << layer << " E" << expert;
  EXPECT_NEAR(it->second.first, start, 1e-6)
      << op_kind_name(k) << " L" << layer << " E" << expert << " start";
  EXPECT_NEAR(it->second.second, end, 1e-6) << op_kind_name(k) << " L" << layer << " E" << expert << " end";
}

TEST(SimPlatform, APrefillsReadsTakeTheProfilesBulkRate) {
  Json j = test_profile().raw;
  j["ssd"]["prefill_read_bandwidth"] = "0.5GB/s";
  j["ssd"]["prefill_read_latency"] = "200us";
  const HardwareProfile hw = hardware_from_json(j, "test.json");
  Op read;
  read.kind = OpKind::kSsdRead;
  read.resource = ResourceClass::kSsd;
  read.bytes = 1'000'000;
  const SimPlatform sparse(test_profile(), SimOptions{}), bulk(hw, SimOptions{});
  EXPECT_NEAR(bulk.estimate(read), 100e-6 + 1e-3, 1e-12);  // a decode step's read: the ordinary rate
  read.prefill = true;
  EXPECT_NEAR(bulk.estimate(read), 200e-6 + 2e-3, 1e-12);
  EXPECT_NEAR(sparse.estimate(read), 100e-6 + 1e-3, 1e-12);  // no bulk rate in the profile: the same
}

TEST(SimPlatform, HandComputedTwoLayerTimelineBlockingIo) {
  const PipelineResult r = run_two_layer(1);
  const auto m = times_us(r, 0);
  // Layer 0 starts at 0.
  //   dense L0        GPU  [0, 30]            2 MB / 100 GB/s = 20 us + 10 us launch
  //   read E0         SSD  [30, 1130]         100 us latency + 1 MB / 1 GB/s = 1000 us
  //   read E1         SSD  [1130, 2230]       the I/O thread issues one read at a time (depth 1)
  //   transfer E0     link [1130, 1135]       UMA: 5 us mapping latency, no copy
  //   compute E0      GPU  [1135, 1155]       1 MB / 100 GB/s = 10 us + 10 us launch
  //   transfer E1     link [2230, 2235]
  //   compute E1      GPU  [2235, 2255]       layer 0 ends at 2255
  expect_span(m, OpKind::kDenseCompute, 0, -1, 0, 30);
  expect_span(m, OpKind::kSsdRead, 0, 0, 30, 1130);
  expect_span(m, OpKind::kSsdRead, 0, 1, 1130, 2230);
  expect_span(m, OpKind::kTransfer, 0, 0, 1130, 1135);
  expect_span(m, OpKind::kExpertCompute, 0, 0, 1135, 1155);
  expect_span(m, OpKind::kTransfer, 0, 1, 2230, 2235);
  expect_span(m, OpKind::kExpertCompute, 0, 1, 2235, 2255);
  // Layer 1 starts at 2255 (it needs layer 0's output): the same shape shifted by 2255 us.
  expect_span(m, OpKind::kDenseCompute, 1, -1, 2255, 2285);
  expect_span(m, OpKind::kSsdRead, 1, 2, 2285, 3385);
  expect_span(m, OpKind::kSsdRead, 1, 3, 3385, 4485);
  expect_span(m, OpKind::kExpertCompute, 1, 2, 3390, 3410);
  expect_span(m, OpKind::kExpertCompute, 1, 3, 4490, 4510);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_NEAR(r.steps[0].end * 1e6, 4510, 1e-6);  // TPOT of step 0
  EXPECT_NEAR((r.invocations[0].end - r.invocations[0].start) * 1e6, 2255, 1e-6);
  // Step 1: every expert hits; per layer: dense 30 us, then two computes of 20 us on the one GPU stream,
  // 70 us per layer: layer 0 on [4510, 4580], layer 1 on [4580, 4650] (dense to 4610, E2 to 4630, E3).
  const auto m1 = times_us(r, 1);
  expect_span(m1, OpKind::kDenseCompute, 0, -1, 4510, 4540);
  expect_span(m1, OpKind::kExpertCompute, 0, 0, 4540, 4560);
  expect_span(m1, OpKind::kExpertCompute, 0, 1, 4560, 4580);
  expect_span(m1, OpKind::kExpertCompute, 1, 3, 4630, 4650);
  EXPECT_NEAR((r.steps[1].end - r.steps[1].start) * 1e6, 140, 1e-6);
  EXPECT_EQ(r.cache.hits, 4u);
  EXPECT_EQ(r.cache.lookups, 8u);
  EXPECT_EQ(r.ssd_bytes, 4'000'000u);
}

// --dense mmap: each layer's 2 MB of dense weights are pages of the page cache; a dense op that misses them
// faults them back in first, at the SSD's cost (100 us + 2 MB / 1 GB/s = 2100 us) on its own lane.
TEST(SimPlatform, MmappedDenseWeightsAreFaultedBackWhenEvicted) {
  SimOptions so;
  so.dense_mmap = true;
  so.page_cache_bytes = 4'000'000;  // both layers' dense weights stay once faulted in
  uint64_t faults = 0;
  PipelineResult r = run_two_layer(1, 0, UINT32_MAX, so, &faults);
  expect_span(times_us(r, 0), OpKind::kDenseCompute, 0, -1, 0, 2130);
  // Each layer of step 0 is 2100 us longer than the pinned timeline (4510 us): step 1 starts at 8710 us.
  expect_span(times_us(r, 1), OpKind::kDenseCompute, 0, -1, 8710, 8740);  // resident: 30 us
  EXPECT_EQ(faults, 2 * 16u);  // two layers, 2 MB in 128 KiB read-arounds: 16 faults each
  // Room for one layer only: the two evict each other, and every dense op faults.
  so.page_cache_bytes = 3'000'000;
  uint64_t decode_faults = 0;
  r = run_two_layer(1, 0, UINT32_MAX, so, &faults, &decode_faults);
  EXPECT_EQ(faults, 4 * 16u);
  EXPECT_EQ(decode_faults, 4 * 16u);  // both steps are decode steps
  expect_span(times_us(r, 1), OpKind::kDenseCompute, 0, -1, 8710, 10840);
  // Pinned dense weights (the default): never faulted, the timeline of
  // HandComputedTwoLayerTimelineBlockingIo.
  r = run_two_layer(1, 0, UINT32_MAX, SimOptions{}, &faults);
  EXPECT_EQ(faults, 0u);
  expect_span(times_us(r, 0), OpKind::kDenseCompute, 0, -1, 0, 30);
}

TEST(SimPlatform, HandComputedTwoLayerTimelineSharedSsd) {
  const PipelineResult r = run_two_layer(2);
  const auto m = times_us(r, 0);
  // With two reads outstanding both spend 100 us in latency, then share 1 GB/s: 2 MB take 2000 us.
  expect_span(m, OpKind::kSsdRead, 0, 0, 30, 2130);
  expect_span(m, OpKind::kSsdRead, 0, 1, 30, 2130);
  // Both transfers are ready at 2130: the link serves E0 then E1; computes follow on the GPU.
  expect_span(m, OpKind::kTransfer, 0, 0, 2130, 2135);
  expect_span(m, OpKind::kTransfer, 0, 1, 2135, 2140);
  expect_span(m, OpKind::kExpertCompute, 0, 0, 2135, 2155);
  expect_span(m, OpKind::kExpertCompute, 0, 1, 2155, 2175);
}

TEST(SimPlatform, ResourceStatsAndUtilization) {
  const PipelineResult r = run_two_layer(1);
  ASSERT_EQ(r.resources.size(), 5u);
  EXPECT_EQ(r.resources[0].name, "ssd");
  EXPECT_NEAR(r.resources[0].busy_time, 4 * 1100e-6, 1e-9);
  EXPECT_EQ(r.resources[0].bytes, 4'000'000u);
  EXPECT_EQ(r.resources[3].name, "gpu");
  // GPU: 4 dense (30 us) + 8 expert computes (20 us).
  EXPECT_NEAR(r.resources[3].busy_time, 4 * 30e-6 + 8 * 20e-6, 1e-9);
  EXPECT_NEAR(r.makespan, 4650e-6, 1e-9);
}

// (time in us, track, value) of the recorded counter samples.
using Sample = std::tuple<double, uint32_t, uint64_t>;
std::vector<Sample> samples_us(const PipelineResult& r) {
  std::vector<Sample> v;
  for (const auto& c : r.counter_samples) v.emplace_back(std::round(c.time * 1e9) / 1e3, c.track, c.value);
  return v;
}

TEST(SimPlatform, HandComputedCounterTracks) {
  const PipelineResult r = run_two_layer(1);
  ASSERT_EQ(r.counter_tracks.size(), 6u);
  EXPECT_EQ(r.counter_tracks[0].kind, CounterTrack::Kind::kPoolBytes);
  const char* queues[] = {"io_thread", "ssd", "cpu_workers", "gpu", "link"};
  for (uint32_t q = 0; q < 5; ++q) {
    EXPECT_EQ(r.counter_tracks[1 + q].kind, CounterTrack::Kind::kQueueLength);
    EXPECT_EQ(r.counter_tracks[1 + q].name, queues[q]);
  }
  // The window starts with every track at 0; layer 0 admits 2 MB at once (the same instant: one sample).
  // Reads wait for the blocking I/O thread: E1 from 30 to 1130 us in layer 0, E3 from 2285 to 3385 in
  // layer 1, when the pool grows to 4 MB. Step 1 hits: per layer the second expert compute waits 20 us
  // for the one GPU stream (4540-4560, 4610-4630).
  const std::vector<Sample> expected{{0, 0, 2'000'000}, {0, 1, 0},    {0, 2, 0},
                                     {0, 3, 0},         {0, 4, 0},    {0, 5, 0},
                                     {30, 1, 1},        {1130, 1, 0}, {2255, 0, 4'000'000},
                                     {2285, 1, 1},      {3385, 1, 0}, {4540, 4, 1},
                                     {4560, 4, 0},      {4610, 4, 1}, {4630, 4, 0}};
  EXPECT_EQ(samples_us(r), expected);
}

TEST(SimPlatform, WindowKeepsOnlyItsSteps) {
  const PipelineResult all = run_two_layer(1);
  const PipelineResult w = run_two_layer(1, 1, 1);
  size_t in_step1 = 0;
  for (const auto& e : all.timeline) in_step1 += e.step == 1;
  EXPECT_EQ(w.timeline.size(), in_step1);
  for (const auto& e : w.timeline) EXPECT_EQ(e.step, 1u);
  // Counters start at step 1 (4510 us) with the values of that moment: the pool holds 4 MB.
  const std::vector<Sample> expected{{4510, 0, 4'000'000}, {4510, 1, 0}, {4510, 2, 0}, {4510, 3, 0},
                                     {4510, 4, 0},         {4510, 5, 0}, {4540, 4, 1}, {4560, 4, 0},
                                     {4610, 4, 1},         {4630, 4, 0}};
  EXPECT_EQ(samples_us(w), expected);
  // The metrics do not depend on the window.
  EXPECT_EQ(w.steps.size(), all.steps.size());
  EXPECT_EQ(w.makespan, all.makespan);
  // A window past the end records nothing.
  const PipelineResult none = run_two_layer(1, 5, 9);
  EXPECT_TRUE(none.timeline.empty());
  EXPECT_TRUE(none.counter_samples.empty());
}

// The platform remembers the estimate of an op that is not an SSD read by the fields the cost model reads:
// each op below differs from another in one of them (fresh weights, tokens, layer, phase, resource, kind,
// bytes) and costs something else, and asked in turns, each gets the cost model's own answer; a new expert
// storage (a layer's dequantization term) is seen at once. Fails with any of those fields left out of the
// key.
TEST(SimPlatform, RemembersEachOpShapesEstimateApart) {
  HardwareProfile hw = test_profile();
  hw.gpu_fresh_expert_overhead = 3e-6;
  hw.gpu_expert_overhead = 15e-6;
  hw.cpu_flops_per_core = 1e11;
  hw.cpu_prefill_compute_slowdown = 1.5;
  hw.gpu_dequant_time_per_element["q4_k"] = 1e-12;
  SimPlatform p(hw);
  CostModel cost(hw);
  const CostModel::ExpertStorage storage{{{"q4_k", 1000}}, {{"q4_k", 5000}}};
  p.set_expert_storage(storage);
  cost.set_expert_storage(storage);
  Op expert;
  expert.kind = OpKind::kExpertCompute;
  expert.resource = ResourceClass::kGpu;
  expert.layer = 0;
  expert.bytes = 1'000'000;
  expert.tokens = 1;
  expert.flops = 1e6;
  std::vector<Op> ops(11, expert);
  ops[1].fresh = true;
  ops[2].tokens = 2;  // the same FLOPs: the tokens alone differ (a GEMM's fixed cost from 2 tokens up)
  ops[3].layer = 1;
  ops[4].prefill = true;
  ops[5].resource = ResourceClass::kCpu;
  ops[6].kind = OpKind::kDenseCompute;
  ops[7].bytes = 3'000'000;
  ops[8].flops = 5e12;
  ops[9].kind = OpKind::kSsdRead;  // a read of an idle SSD, at the decode rate and at prefill's bulk rate
  ops[9].resource = ResourceClass::kSsd;
  ops[10] = ops[9];
  ops[10].prefill = true;
  hw.ssd_prefill_read_bandwidth = 2e9;
  hw.ssd_prefill_read_latency = 50e-6;
  hw.gpu_expert_gemm_overhead = 40e-6;
  SimPlatform gemm(hw);
  CostModel gemm_cost(hw);
  gemm.set_expert_storage(storage);
  gemm_cost.set_expert_storage(storage);
  std::set<double> distinct;
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[(i * 5 + static_cast<size_t>(round)) % ops.size()];
      EXPECT_EQ(p.estimate(op), cost.estimate(op)) << i << " round " << round;
      EXPECT_EQ(gemm.estimate(op), gemm_cost.estimate(op)) << i << " round " << round;
      distinct.insert(gemm_cost.estimate(op));
    }
  EXPECT_EQ(distinct.size(), ops.size());  // each field changes the cost: the test can tell them apart
  const CostModel::ExpertStorage more{{{"q4_k", 7000}}, {{"q4_k", 5000}}};
  p.set_expert_storage(more);
  cost.set_expert_storage(more);
  EXPECT_EQ(p.estimate(ops[0]), cost.estimate(ops[0]));
}

}  // namespace
}  // namespace moesim::sim
