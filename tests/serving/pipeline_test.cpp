// The pipeline end to end on the simulated platform: determinism, batching, budgets, DAG shapes.
#include "serving/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "harness/sim_runner.h"
#include "serving/metrics.h"
#include "serving/zipmoe_loads.h"
#include "tests/core/fake_platform.h"
#include "tests/core/tiny_workload.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"
#include "traces/trace.h"
#include "traces/trace_io.h"

namespace moesim {
namespace {

const std::string kRealTrace = test::bundled_data("traces/qwen3-30b-a3b.route.csv");

Json run_json(const traces::Trace& t, const std::string& policy, const std::string& budget, uint32_t batch,
              CacheScope scope = CacheScope::kGlobal) {
  const serving::SourcedCosts costs = serving::model_costs(t.info(), std::nullopt);
  serving::SystemConfig cfg;
  cfg.eviction = PolicySpec::parse(policy);
  cfg.scope = scope;
  cfg.budget = CacheCapacity::parse(budget);
  const auto stream = traces::build_lookup_stream(t, batch);
  const auto hw = load_hardware("jetson-agx-orin-64gb");
  const auto r = harness::run_simulated(cfg, stream, t.info(), costs, hw);
  return metrics_json(r.result);
}

TEST(Pipeline, SameRunTwiceGivesBitIdenticalMetrics) {
  const traces::Trace t = traces::load_trace(kRealTrace);
  for (const char* policy : {"lru", "random:seed=3", "belady"}) {
    const std::string a = run_json(t, policy, "1GiB", 1).dump();
    const std::string b = run_json(t, policy, "1GiB", 1).dump();
    EXPECT_EQ(a, b) << policy;
  }
}

TEST(Pipeline, HitCountsMatchTheReplayOfTheSameStream) {
  // The timed pipeline and the counting fast path drive the same cache code: same hits.
  const traces::Trace t = traces::load_trace(kRealTrace);
  const Json m = run_json(t, "lru", "2GiB", 1);
  const auto stream = traces::build_lookup_stream(t, 1);
  CacheConfig cc = make_cache_config(t.info().layers, t.info().experts, t.info().top_k, CacheScope::kGlobal,
                                     CacheCapacity::parse("2GiB"), t.info().expert_bytes);
  auto policy = make_eviction_policy("lru", cc);
  const CacheCounters c = policy->replay(traces::lookup_view(stream));
  EXPECT_EQ(m["cache"]["hits"].get<uint64_t>(), c.hits);
  EXPECT_EQ(m["cache"]["decode_hits"].get<uint64_t>(), c.decode_hits);
  EXPECT_EQ(m["ssd_bytes_read"].get<uint64_t>(), c.read_bytes);
}

TEST(Pipeline, BiggerBudgetNeverSlowerForBelady) {
  const traces::Trace t = traces::load_trace(kRealTrace);
  const Json small = run_json(t, "belady", "1GiB", 1);
  const Json big = run_json(t, "belady", "8GiB", 1);
  EXPECT_GE(big["cache"]["hits"].get<uint64_t>(), small["cache"]["hits"].get<uint64_t>());
  EXPECT_LT(big["tpot"]["mean_s"].get<double>(), small["tpot"]["mean_s"].get<double>());
}

traces::Trace two_sequence_trace() {
  traces::TraceInfo info;
  info.model = "qwen3-30b-a3b";
  info.layers = 48;
  info.experts = 128;
  info.top_k = 2;
  info.expert_bytes.assign(48, 1'000'000);
  traces::TraceBuilder b(info, false, false, "test");
  const uint32_t s0[] = {0, 1}, s1[] = {1, 2};
  for (uint32_t l = 0; l < 48; ++l) {
    b.add(0, traces::Phase::kDecode, 0, l, s0, {}, {}, 1);
    b.add(1, traces::Phase::kDecode, 0, l, s1, {}, {}, 2);
  }
  return std::move(b).finish();
}

TEST(Pipeline, BatchOfTwoUnionsExpertsAndCountsTokens) {
  const traces::Trace t = two_sequence_trace();
  const auto stream = traces::build_lookup_stream(t, 2);
  const serving::SourcedCosts costs = serving::model_costs(t.info(), std::nullopt);
  serving::SystemConfig cfg;
  cfg.budget = CacheCapacity::parse("4");
  cfg.record_timeline = true;
  const auto r = harness::run_simulated(cfg, stream, t.info(), costs, load_hardware("jetson-agx-orin-64gb"));
  ASSERT_EQ(r.result.steps.size(), 1u);  // one decode step of the group
  EXPECT_EQ(r.result.steps[0].tokens, 2u);
  EXPECT_EQ(r.result.cache.lookups, 48u * 3);  // union {0, 1, 2} per layer
  std::map<int, uint32_t> tokens;              // layer-0 expert -> tokens of its compute op
  uint32_t dense_tokens = 0;
  for (const auto& e : r.result.timeline) {
    if (e.op.layer != 0) continue;
    if (e.op.kind == OpKind::kExpertCompute) tokens[e.op.expert] = e.op.tokens;
    if (e.op.kind == OpKind::kDenseCompute) dense_tokens = e.op.tokens;
  }
  EXPECT_EQ(tokens, (std::map<int, uint32_t>{{0, 1}, {1, 2}, {2, 1}}));
  EXPECT_EQ(dense_tokens, 2u);
  // Batch 1: the two sequences decode one after the other, 2 steps and 4 lookups per layer.
  const auto serial = harness::run_simulated(cfg, traces::build_lookup_stream(t, 1), t.info(), costs,
                                             load_hardware("jetson-agx-orin-64gb"));
  EXPECT_EQ(serial.result.steps.size(), 2u);
  EXPECT_EQ(serial.result.cache.lookups, 48u * 4);
}

TEST(Pipeline, BudgetBelowOneLayersTopKIsAnError) {
  const traces::Trace t = traces::load_trace(kRealTrace);  // top-6 experts of 2.92 MiB
  try {
    run_json(t, "lru", "10MiB", 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("top-k"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_json(t, "lru", "100MiB", 1, CacheScope::kPerLayer), Error);  // 2 MiB per layer
  EXPECT_THROW(run_json(t, "no-such-policy", "1GiB", 1), Error);
}

TEST(Pipeline, CompressedLayoutBuildsZipMoeDags) {
  // One expert of one 1 MB tensor in state M with K = 4 shards: 4 E-chunk reads -> 4 decompressions,
  // 1 SM read, a transfer, a recovery, the compute; state C skips the reads.
  // One step of two invocations of expert 0: a miss, then a hit.
  const test::TinyWorkload w({{{0}, {0}}}, {"w"});
  PipelineOptions po;
  TensorLayout layout;
  layout.compressed = true;
  layout.shards = 4;
  layout.e_ratio = 0.5;
  po.loads = serving::zipmoe_loads(layout, false);
  po.record_timeline = true;
  sim::SimPlatform platform(load_hardware("jetson-agx-orin-64gb"));
  const PipelineResult r = w.run(platform, po);
  std::map<std::pair<uint32_t, OpKind>, int> count;
  uint64_t read_bytes = 0;
  for (const auto& e : r.timeline) {
    ++count[{e.step, e.op.kind}];
    if (e.op.kind == OpKind::kSsdRead) read_bytes += e.op.bytes;
  }
  EXPECT_EQ((count[{0, OpKind::kSsdRead}]), 5);  // 4 E-chunk shards + 1 SM-chunk
  EXPECT_EQ((count[{0, OpKind::kDecompress}]), 4);
  EXPECT_EQ((count[{0, OpKind::kRecover}]), 1);
  EXPECT_EQ((count[{0, OpKind::kExpertCompute}]), 2);  // one per invocation
  // SM = 500 kB; exponents 500 kB compressed at rho = 0.5 -> 250 kB read in 4 shards.
  EXPECT_EQ(read_bytes, 750'000u);
  // Second invocation: the full tensor is cached (F), so only the compute runs.
  EXPECT_EQ((count[{0, OpKind::kDenseCompute}]), 2);
  EXPECT_EQ(r.cache.hits, 1u);
}

TEST(Pipeline, OffloadRunRecordsOnlyTheTimelineWindow) {
  const traces::Trace t = traces::load_trace(kRealTrace);
  const serving::SourcedCosts costs = serving::model_costs(t.info(), std::nullopt);
  const auto stream = traces::build_lookup_stream(t, 1);
  serving::SystemConfig cfg;
  cfg.budget = CacheCapacity::parse("1GiB");
  const auto hw = load_hardware("jetson-agx-orin-64gb");
  // Without record_timeline nothing is kept, whatever the window.
  cfg.timeline_first_step = 3;
  cfg.timeline_last_step = 4;
  const auto off = harness::run_simulated(cfg, stream, t.info(), costs, hw);
  EXPECT_TRUE(off.result.timeline.empty());
  EXPECT_TRUE(off.result.counter_samples.empty());
  EXPECT_TRUE(off.result.counter_tracks.empty());
  cfg.record_timeline = true;
  const auto on = harness::run_simulated(cfg, stream, t.info(), costs, hw);
  ASSERT_FALSE(on.result.timeline.empty());
  std::set<uint32_t> steps;
  for (const auto& e : on.result.timeline) steps.insert(e.step);
  EXPECT_EQ(steps, (std::set<uint32_t>{3, 4}));
  EXPECT_EQ(on.result.timeline_first_step, 3u);
  EXPECT_EQ(on.result.timeline_last_step, 4u);
  EXPECT_EQ(on.result.counter_tracks.size(), 6u);  // the pool and the platform's five queues
  EXPECT_GE(on.result.counter_samples.front().time, on.result.steps[3].start);
  EXPECT_LE(on.result.counter_samples.back().time, on.result.steps[4].end);
  // Recording changes no number.
  EXPECT_EQ(metrics_json(on.result).dump(), metrics_json(off.result).dump());
  for (const auto& inv : on.result.invocations)
    EXPECT_TRUE(inv.step < on.result.steps.size() && inv.start >= on.result.steps[inv.step].start &&
                inv.end <= on.result.steps[inv.step].end);
}

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

// A routing policy that records the context it is given (registered for this test binary only).
std::vector<uint32_t>& seen_top_k() {
  static std::vector<uint32_t> v;
  return v;
}
class RecordingRouting final : public RoutingPolicy {
 public:
  void route(const RoutingContext& ctx, std::span<uint16_t>) override { seen_top_k().push_back(ctx.top_k); }
};
MOESIM_REGISTER(RoutingRegistry, "test-record-context", "pipeline test: records RoutingContext", {},
                [](const Params&, const RoutingSetup&) -> std::unique_ptr<RoutingPolicy> {
                  return std::make_unique<RecordingRouting>();
                });

TEST(Pipeline, RoutingPoliciesSeeTheTracesTopK) {
  // Regression: RoutingContext::top_k used to be 0 on every call.
  const traces::Trace t = traces::load_trace(kRealTrace);
  const serving::SourcedCosts costs = serving::model_costs(t.info(), std::nullopt);
  serving::SystemConfig cfg;
  cfg.routing = PolicySpec{"test-record-context", {}};
  cfg.trace = &t;
  cfg.budget = CacheCapacity::parse("2GiB");
  const auto stream = traces::build_lookup_stream(t, 1);
  seen_top_k().clear();
  harness::run_simulated(cfg, stream, t.info(), costs, load_hardware("jetson-agx-orin-64gb"));
  ASSERT_EQ(seen_top_k().size(), stream.invocations());
  for (uint32_t k : seen_top_k()) ASSERT_EQ(k, 6u);
}

}  // namespace
}  // namespace moesim

// ---- the pipeline on the fake platform (tests/core/fake_platform.h): no sim/, schedules worked by hand ----

namespace moesim {
namespace {

// One layer, two experts of one 1 MB tensor; steps of one decode invocation each (the keys it looks up),
// an LRU cache of two experts.
PipelineResult fake_run(const std::vector<std::vector<uint32_t>>& steps, test::FakePlatform& platform) {
  std::vector<std::vector<std::vector<uint32_t>>> invocations;
  for (const auto& keys : steps) invocations.push_back({keys});
  PipelineOptions po;
  po.record_timeline = true;
  return test::TinyWorkload(invocations, {"w"}).run(platform, po, 2);
}

test::FakePlatform hand_timed_platform() {
  test::FakePlatform f;
  f.duration(OpKind::kDenseCompute, 1)
      .duration(OpKind::kSsdRead, 2)
      .duration(OpKind::kTransfer, 3)
      .duration(OpKind::kExpertCompute, 4);
  return f;
}

TEST(PipelineOnFakePlatform, MissThenHitFollowsTheFullTensorDag) {
  // Step 0, expert 0 missed: dense [0,1] -> read [1,3] -> transfer [3,6] -> compute [6,10].
  // Step 1, expert 0 resident (F): dense [10,11] -> compute [11,15].
  test::FakePlatform f = hand_timed_platform();
  const PipelineResult r = fake_run({{0}, {0}}, f);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(r.steps[0].start, 0);
  EXPECT_DOUBLE_EQ(r.steps[0].end, 10);
  EXPECT_DOUBLE_EQ(r.steps[1].start, 10);
  EXPECT_DOUBLE_EQ(r.steps[1].end, 15);
  EXPECT_DOUBLE_EQ(r.makespan, 15);
  EXPECT_EQ(r.cache.hits, 1u);
  std::map<OpKind, int> count;
  for (const auto& e : r.timeline) ++count[e.op.kind];
  EXPECT_EQ(count[OpKind::kSsdRead], 1);
  EXPECT_EQ(count[OpKind::kTransfer], 1);
  EXPECT_EQ(count[OpKind::kExpertCompute], 2);
  EXPECT_EQ(count[OpKind::kDenseCompute], 2);
}

TEST(PipelineOnFakePlatform, OpsSayWhetherAPrefillIssuedThemAndWhetherTheComputesWeightsAreFresh) {
  // Step 0 (a prefill) misses expert 0: its read and transfer are the prefill's (bulk reads), and its compute
  // reads the weights those ops just produced (fresh). Step 1 (decode) finds it resident: neither.
  std::vector<std::vector<std::vector<uint32_t>>> invocations{{{0}}, {{0}}};
  test::TinyWorkload w(invocations, {"w"});
  w.phase[0] = 0;
  w.inv_phase[0] = 0;
  PipelineOptions po;
  po.record_timeline = true;
  test::FakePlatform f = hand_timed_platform();
  const PipelineResult r = w.run(f, po, 2);
  std::map<std::pair<uint32_t, OpKind>, Op> ops;
  for (const auto& e : r.timeline) ops[{e.step, e.op.kind}] = e.op;
  ASSERT_EQ(ops.size(), 6u);  // step 0: dense, read, transfer, compute; step 1: dense, compute
  EXPECT_TRUE((ops[{0, OpKind::kSsdRead}].prefill));
  EXPECT_TRUE((ops[{0, OpKind::kDenseCompute}].prefill));
  EXPECT_TRUE((ops[{0, OpKind::kExpertCompute}].fresh));
  EXPECT_FALSE((ops[{1, OpKind::kExpertCompute}].fresh));
  EXPECT_FALSE((ops[{1, OpKind::kExpertCompute}].prefill));
  EXPECT_FALSE((ops[{1, OpKind::kDenseCompute}].prefill));
}

TEST(PipelineOnFakePlatform, TwoMissesQueueOnOneUnitPerResource) {
  // dense [0,1]; reads e0 [1,3], e1 [3,5] (one SSD unit); transfers e0 [3,6], e1 [6,9] (the link is busy
  // until 6); computes e0 [6,10], e1 [10,14] (the GPU is busy until 10). The invocation ends at 14.
  test::FakePlatform f = hand_timed_platform();
  const PipelineResult r = fake_run({{0, 1}}, f);
  ASSERT_EQ(r.invocations.size(), 1u);
  EXPECT_DOUBLE_EQ(r.invocations[0].end, 14);
  std::vector<std::pair<double, double>> computes;
  for (const auto& e : r.timeline)
    if (e.op.kind == OpKind::kExpertCompute) computes.emplace_back(e.timing.start, e.timing.end);
  ASSERT_EQ(computes.size(), 2u);
  std::sort(computes.begin(), computes.end());
  EXPECT_EQ(computes[0], (std::pair<double, double>{6, 10}));
  EXPECT_EQ(computes[1], (std::pair<double, double>{10, 14}));
  // Two GPU streams: the computes overlap, [6,10] and [9,13]; the invocation ends at 13.
  test::FakePlatform f2 = hand_timed_platform();
  f2.units(ResourceClass::kGpu, 2);
  const PipelineResult r2 = fake_run({{0, 1}}, f2);
  EXPECT_DOUBLE_EQ(r2.invocations[0].end, 13);
}

// ZipMoE's split DAG of one missed expert (one tensor, K = 2 E-chunk shards) on 2 CPU workers, with the
// E-chunk reads fused into their decompressions (ZipMoE §4's prototype) or on the I/O thread (§3.3).
// Durations: dense 1, SSD read (the I/O thread's, either chunk) 2, a worker's fused read 3, decompression 1,
// transfer 1, recovery 1, expert compute 4.
PipelineResult split_run(bool fused) {
  test::FakePlatform f;
  f.duration(OpKind::kDenseCompute, 1)
      .duration(OpKind::kSsdRead, 2)
      .duration(OpKind::kDecompress, 1)
      .duration(OpKind::kTransfer, 1)
      .duration(OpKind::kRecover, 1)
      .duration(OpKind::kExpertCompute, 4)
      .fused_read(3)
      .units(ResourceClass::kCpu, 2);
  PipelineOptions po;
  TensorLayout layout;
  layout.compressed = true;
  layout.shards = 2;
  layout.e_ratio = 0.5;
  po.loads = serving::zipmoe_loads(layout, fused);
  po.record_timeline = true;
  return test::TinyWorkload({{{0}}}, {"w"}).run(f, po, 1);
}

// A Gantt row: (kind, unit, start, end); a run's rows by start, then kind, then unit.
using GanttRow = std::tuple<OpKind, uint32_t, double, double>;
std::vector<GanttRow> gantt(const PipelineResult& r) {
  std::vector<GanttRow> rows;
  for (const auto& e : r.timeline) rows.emplace_back(e.op.kind, e.timing.unit, e.timing.start, e.timing.end);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<2>(a), std::get<0>(a), std::get<1>(a)) <
           std::tie(std::get<2>(b), std::get<0>(b), std::get<1>(b));
  });
  return rows;
}

TEST(PipelineOnFakePlatform, FusedZipMoeLayerFollowsTheHandWorkedGantt) {
  // io=fused, worked by hand:
  //   gpu        dense [0,1]                                        recover [6,7]  compute [7,11]
  //   io thread         SM-chunk read [1,3]
  //   worker 0          read e0 + decompress [1,5]
  //   worker 1          read e1 + decompress [1,5]
  //   link                                        transfer [5,6]
  // The two shards' reads overlap each other and the SM read; the layer ends at 11.
  const PipelineResult r = split_run(true);
  EXPECT_EQ(gantt(r), (std::vector<GanttRow>{{OpKind::kDenseCompute, 0, 0, 1},
                                             {OpKind::kSsdRead, 0, 1, 3},
                                             {OpKind::kDecompress, 0, 1, 5},
                                             {OpKind::kDecompress, 1, 1, 5},
                                             {OpKind::kTransfer, 0, 5, 6},
                                             {OpKind::kRecover, 0, 6, 7},
                                             {OpKind::kExpertCompute, 0, 7, 11}}));
  EXPECT_DOUBLE_EQ(r.invocations.at(0).end, 11);
  // The decompressions carry their shards' compressed bytes (500 kB of exponents at rho 0.5 in 2 shards),
  // counted as SSD bytes with the SM-chunk's 500 kB.
  for (const auto& e : r.timeline) {
    if (e.op.kind == OpKind::kDecompress) {
      EXPECT_EQ(e.op.read_bytes, 125'000u);
    }
  }
  EXPECT_EQ(r.ssd_bytes, 750'000u);
  EXPECT_EQ(r.ssd_bytes_by_part[static_cast<size_t>(TensorPart::kE)], 250'000u);
}

TEST(PipelineOnFakePlatform, ThreadIoZipMoeLayerReadsEverythingOnTheIoThread) {
  // io=thread, worked by hand: the one I/O thread reads E-chunks first (§3.3), then the SM-chunk:
  //   io thread  e0 [1,3]  e1 [3,5]  SM [5,7]
  //   workers    decompress e0 [3,4] (worker 0), e1 [5,6] (worker 0, free again)
  //   link transfer [7,8], gpu recover [8,9], compute [9,13]: two time units later than fused.
  const PipelineResult r = split_run(false);
  EXPECT_EQ(gantt(r), (std::vector<GanttRow>{{OpKind::kDenseCompute, 0, 0, 1},
                                             {OpKind::kSsdRead, 0, 1, 3},
                                             {OpKind::kSsdRead, 0, 3, 5},
                                             {OpKind::kDecompress, 0, 3, 4},
                                             {OpKind::kSsdRead, 0, 5, 7},
                                             {OpKind::kDecompress, 0, 5, 6},
                                             {OpKind::kTransfer, 0, 7, 8},
                                             {OpKind::kRecover, 0, 8, 9},
                                             {OpKind::kExpertCompute, 0, 9, 13}}));
  EXPECT_EQ(r.ssd_bytes, 750'000u);
}

}  // namespace
}  // namespace moesim
