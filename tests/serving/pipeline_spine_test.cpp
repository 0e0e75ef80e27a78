// The second spine on the fake platform (tests/core/fake_platform.h), no sim/: memory events reach the
// platform and give pool peaks; layer-offload loads every expert of a layer; a layer's successor starts when
// its layer work ends; recovery and compute run where the options place them.
#include <gtest/gtest.h>

#include <map>

#include "core/prefetch.h"
#include "serving/pipeline.h"
#include "serving/zipmoe_loads.h"
#include "tests/core/fake_platform.h"
#include "tests/core/tiny_workload.h"

namespace moesim {
namespace {

test::FakePlatform hand_timed_platform() {
  test::FakePlatform f;
  f.duration(OpKind::kDenseCompute, 1)
      .duration(OpKind::kSsdRead, 2)
      .duration(OpKind::kTransfer, 3)
      .duration(OpKind::kExpertCompute, 4);
  return f;
}

TEST(PipelineSpine, MemoryEventsReachThePlatformAndGivePeaks) {
  // A one-expert LRU cache; experts 0, 1, 0: every lookup misses and evicts the other expert.
  const test::TinyWorkload w({{{0}}, {{1}}, {{0}}}, {"w"});
  test::FakePlatform f = hand_timed_platform();
  PipelineOptions po;
  const PipelineResult r = w.run(f, po, 1);
  ASSERT_EQ(f.pools().size(), 1u);
  EXPECT_EQ(f.pools()[0].name, "full-tensor pool");
  std::vector<std::pair<MemoryEvent::Kind, uint32_t>> seen;
  for (const auto& [t, e] : f.memory_events) {
    seen.emplace_back(e.kind, e.key);
    EXPECT_EQ(e.bytes, 1'000'000u);
  }
  using K = MemoryEvent::Kind;
  EXPECT_EQ(seen, (std::vector<std::pair<K, uint32_t>>{
                      {K::kAdmit, 0}, {K::kAdmit, 1}, {K::kEvict, 0}, {K::kAdmit, 0}, {K::kEvict, 1}}));
  // Events arrive when each invocation starts: 0, then 10 and 20 (dense 1 + read 2 + transfer 3 + compute 4).
  EXPECT_DOUBLE_EQ(f.memory_events[0].first, 0);
  EXPECT_DOUBLE_EQ(f.memory_events[1].first, 10);
  EXPECT_DOUBLE_EQ(f.memory_events[4].first, 20);
  ASSERT_EQ(r.pools.size(), 1u);
  EXPECT_EQ(r.pools[0].peak_bytes, 1'000'000u);  // measured after evictions: the cache never holds two
  EXPECT_EQ(r.pools[0].final_bytes, 1'000'000u);
  EXPECT_EQ(r.pools[0].admits, 3u);
  EXPECT_EQ(r.pools[0].evicts, 2u);
  EXPECT_EQ(r.memory_peak, 1'000'000u);
  EXPECT_EQ(r.states.lookups[static_cast<size_t>(ExpertState::kMissed)], 3u);
  EXPECT_EQ(r.ssd_bytes_by_part[static_cast<size_t>(TensorPart::kWhole)], 3'000'000u);
}

TEST(PipelineSpine, LayerOffloadLoadsEveryExpertOfTheLayerAndComputesTheRoutedOnes) {
  // Two experts, expert 0 routed: both are read and made visible (2 reads, 2 transfers), one compute.
  // dense [0,1]; reads [1,3] [3,5]; transfers [3,6] [6,9]; compute e0 [6,10]; the layer ends at 10 only
  // if expert 1's transfer (ends 9) is done too -- it is.
  const test::TinyWorkload w({{{0}}}, {"w"});
  test::FakePlatform f = hand_timed_platform();
  PipelineOptions po;
  po.load_whole_layer = true;
  po.record_timeline = true;
  const PipelineResult r = w.run(f, po, 2);
  std::map<OpKind, int> count;
  for (const auto& e : r.timeline) ++count[e.op.kind];
  EXPECT_EQ(count[OpKind::kSsdRead], 2);
  EXPECT_EQ(count[OpKind::kTransfer], 2);
  EXPECT_EQ(count[OpKind::kExpertCompute], 1);
  EXPECT_EQ(r.cache.lookups, 2u);
  ASSERT_EQ(r.invocations.size(), 1u);
  EXPECT_DOUBLE_EQ(r.invocations[0].end, 10);
}

TEST(PipelineSpine, LayersRunInOrderAcrossTheWholeRun) {
  // Two layers of two experts; one decode step touching expert 0 of layer 0 then expert 0 of layer 1
  // (key 2). Layer 1's dense op starts only when layer 0's compute ends (10): [10,11], read [11,13],
  // transfer [13,16], compute [16,20].
  test::TinyWorkload w({{{0}, {2}}}, {"w"});
  w.set_shape(2, 2);
  test::FakePlatform f = hand_timed_platform();
  PipelineOptions po;
  const PipelineResult r = w.run(f, po, 1);
  ASSERT_EQ(r.invocations.size(), 2u);
  EXPECT_EQ(r.invocations[1].layer, 1u);
  EXPECT_DOUBLE_EQ(r.invocations[0].end, 10);
  EXPECT_DOUBLE_EQ(r.invocations[1].start, 10);
  EXPECT_DOUBLE_EQ(r.invocations[1].end, 20);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(r.steps[0].end, 20);
}

TEST(PipelineSpine, ComputeOnTheCpuNeedsNoTransfer) {
  // Expert compute placed on the CPU (llama.cpp --n-cpu-moe): the weights stay in host memory.
  const test::TinyWorkload w({{{0}}}, {"w"});
  test::FakePlatform f = hand_timed_platform();
  PipelineOptions po;
  po.compute_on = ResourceClass::kCpu;
  po.record_timeline = true;
  const PipelineResult r = w.run(f, po, 1);
  std::map<std::pair<OpKind, ResourceClass>, int> count;
  for (const auto& e : r.timeline) ++count[{e.op.kind, e.op.resource}];
  EXPECT_EQ((count[{OpKind::kTransfer, ResourceClass::kLink}]), 0);
  EXPECT_EQ((count[{OpKind::kExpertCompute, ResourceClass::kCpu}]), 1);
  EXPECT_DOUBLE_EQ(r.makespan, 1 + 2 + 4);
}

TEST(PipelineSpine, RecoveryOnTheCpuRunsBeforeTheTransfer) {
  const test::TinyWorkload w({{{0}}}, {"w"});
  test::FakePlatform f = hand_timed_platform();
  PipelineOptions po;
  TensorLayout layout;
  layout.compressed = true;
  layout.shards = 2;
  po.loads = serving::zipmoe_loads(layout, false);
  po.recover_on = ResourceClass::kCpu;
  po.record_timeline = true;
  const PipelineResult r = w.run(f, po, 1);
  double recover_end = -1, transfer_start = -1;
  for (const auto& e : r.timeline) {
    if (e.op.kind == OpKind::kRecover) {
      EXPECT_EQ(e.op.resource, ResourceClass::kCpu);
      recover_end = e.timing.end;
    }
    if (e.op.kind == OpKind::kTransfer) transfer_start = e.timing.start;
  }
  ASSERT_GE(recover_end, 0);
  EXPECT_GE(transfer_start, recover_end);
}

// Three layers of four experts, one decode step using one expert per layer; reads are fast (0.5) and
// compute slow (4), so a load started when a layer starts is done long before the next layer needs it.
struct PrefetchRun {
  PipelineResult r;
  explicit PrefetchRun(const std::string& spec) {
    test::TinyWorkload w({{{1}, {4 + 2}, {8 + 3}}}, {"w"});
    w.set_shape(3, 4);
    test::FakePlatform f;
    f.duration(OpKind::kDenseCompute, 1)
        .duration(OpKind::kSsdRead, 0.5)
        .duration(OpKind::kTransfer, 0.5)
        .duration(OpKind::kExpertCompute, 4);
    auto prefetch = make_prefetch_policy(spec, PrefetchSetup{3, 4, 1, 7});
    PipelineOptions po;
    po.record_timeline = true;
    r = w.run(f, po, 2, prefetch.get());
  }
};

TEST(PipelineSpine, AnExactPrefetcherWithFastReadsLeavesNoLayerWaitingForARead) {
  const PrefetchRun run("oracle:accuracy=1");
  const PipelineResult& r = run.r;
  for (const auto& e : r.timeline) {  // only layer 0 reads on demand; the others were prefetched
    if (e.op.kind == OpKind::kSsdRead && !e.op.prefetch) {
      EXPECT_EQ(e.op.layer, 0u);
    }
  }
  EXPECT_EQ(r.prefetch.issued, 2u);
  EXPECT_EQ(r.prefetch.useful, 2u);
  EXPECT_EQ(r.prefetch.late, 0u);
  EXPECT_EQ(r.prefetch.useless, 0u);
  EXPECT_EQ(r.states.in_flight, 0u);
  EXPECT_EQ(r.states.lookups[static_cast<size_t>(ExpertState::kFull)], 2u);
  // Each later layer is dense + compute only: 5 time units.
  ASSERT_EQ(r.invocations.size(), 3u);
  EXPECT_DOUBLE_EQ(r.invocations[1].end - r.invocations[1].start, 5);
  EXPECT_DOUBLE_EQ(r.invocations[2].end - r.invocations[2].start, 5);
}

TEST(PipelineSpine, AWrongPrefetcherReadsUselessBytesAndIsCountedSo) {
  const PrefetchRun run("oracle:accuracy=0");
  const PipelineResult& r = run.r;
  EXPECT_EQ(r.prefetch.issued, 2u);
  EXPECT_EQ(r.prefetch.useful, 0u);
  EXPECT_EQ(r.prefetch.useless, 2u);
  EXPECT_EQ(r.prefetch.useless_bytes, 2'000'000u);
  EXPECT_EQ(r.states.lookups[static_cast<size_t>(ExpertState::kMissed)], 3u);
}

TEST(PipelineSpine, ALookupThatFindsItsExpertLoadingWaitsForIt) {
  // Layer 0 routes to no expert and ends at 1 (its dense op); the prefetch of layer 1's expert reads for
  // 10 (from 0) and transfers for 1, so layer 1 finds it loading and its compute waits until 11: late.
  test::TinyWorkload w({{{}, {4 + 2}}}, {"w"});
  w.set_shape(2, 4);
  test::FakePlatform f;
  f.duration(OpKind::kSsdRead, 10);
  auto prefetch = make_prefetch_policy("oracle:accuracy=1", PrefetchSetup{2, 4, 1, 7});
  PipelineOptions po;
  po.record_timeline = true;
  const PipelineResult r = w.run(f, po, 2, prefetch.get());
  EXPECT_EQ(r.prefetch.late, 1u);
  EXPECT_EQ(r.states.in_flight, 1u);
  double load_end = 0, compute_start = 0;
  for (const auto& e : r.timeline) {
    if (e.op.layer != 1) continue;
    if (e.op.prefetch) load_end = std::max(load_end, e.timing.end);
    if (e.op.kind == OpKind::kExpertCompute) compute_start = e.timing.start;
  }
  EXPECT_DOUBLE_EQ(load_end, 11);
  EXPECT_DOUBLE_EQ(compute_start, 11);
}

}  // namespace
}  // namespace moesim
