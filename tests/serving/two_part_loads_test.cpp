// A system with a load layout of its own, registered here and run through the pipeline without any change
// to serving/: how a storage format is one system file (docs/architecture.md §3). Each tensor of the toy
// format is stored as a small header, whose read says where the body is, and the body; the body is then
// unpacked on a CPU worker (a kDecompress) and copied to the GPU. The cache is the classic expert cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "base/error.h"
#include "serving/classic_residency.h"
#include "serving/load_layout.h"
#include "serving/system.h"
#include "tests/serving/system_run.h"

namespace moesim {
namespace {

constexpr uint64_t kHeaderBytes = 4096;

class HeaderBodyLoads final : public LoadLayout {
 public:
  void add_load(const TensorLoad& load, OpGraph& g, std::vector<uint32_t>& tails) const override {
    if (load.to != ExpertState::kFull) throw Error("header-body loads: no partial states");
    auto make = [&](OpKind k, uint64_t bytes) {
      Op o = load.base;
      o.kind = k;
      o.resource = default_resource(k);
      o.bytes = bytes;
      return o;
    };
    const uint32_t header = g.add(make(OpKind::kSsdRead, kHeaderBytes), load.roots);
    const uint32_t body = g.add(make(OpKind::kSsdRead, load.bytes - kHeaderBytes), {header});
    const uint32_t unpack = g.add(make(OpKind::kDecompress, load.bytes), {body});
    tails.push_back(g.add(make(OpKind::kTransfer, load.bytes), {unpack}));
  }
};

class HeaderBodySystem final : public serving::System {
 public:
  std::unique_ptr<Residency> build(const serving::SystemBuildContext& ctx, const PolicySpec& eviction,
                                   PipelineOptions& po, serving::RunResult& r) const override {
    po.loads = std::make_shared<HeaderBodyLoads>();
    return serving::make_run_expert_cache(ctx, eviction, r);
  }
};

MOESIM_REGISTER(SystemRegistry, "test-header-body",
                "two-part loads test: a header read, then the body's read and its unpacking", {},
                [](const Params&) -> std::unique_ptr<serving::System> {
                  return std::make_unique<HeaderBodySystem>();
                });

TEST(TwoPartLoads, AMissIsTheSystemsHeaderReadThenItsBodyReadThenTheUnpacking) {
  // Three decode steps of one layer (expert 0, 0, 1), one expert of room. Two SSD units, so that the body
  // read waits for the header by its dependency alone, not for a free unit. A miss: dense [0,1], header read
  // [1,3], body read [3,5], unpack (decompression, 1 s) [5,6], transfer [6,9], compute [9,13]: 13 s; the hit:
  // dense and compute, 5 s.
  const test::TinyWorkload w({{{0}}, {{0}}, {{1}}}, {"w"});
  test::FakePlatform f = test::fixed_durations();
  f.units(ResourceClass::kSsd, 2);
  serving::SystemConfig cfg;
  cfg.scope = CacheScope::kPerLayer;
  cfg.budget = CacheCapacity{CacheCapacity::Unit::kExperts, 1};
  PipelineOptions po;
  po.record_timeline = true;
  const PipelineResult r = test::run_system("test-header-body", "lru", cfg, w, f, po).result;
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_DOUBLE_EQ(r.steps[0].end - r.steps[0].start, 13);
  EXPECT_DOUBLE_EQ(r.steps[1].end - r.steps[1].start, 5);
  EXPECT_DOUBLE_EQ(r.steps[2].end - r.steps[2].start, 13);
  // Bytes read: two misses of the 1 MB expert, header and body each, all of it whole-tensor reads.
  EXPECT_EQ(r.ssd_bytes, 2'000'000u);
  EXPECT_EQ(r.ssd_bytes_by_part[static_cast<size_t>(TensorPart::kWhole)], 2'000'000u);
  // The op graph: per miss two reads, one unpacking, one transfer; per step a dense op and a compute.
  std::map<OpKind, int> kinds;
  std::vector<std::pair<uint64_t, double>> reads;  // (bytes, start) of step 0's reads
  for (const auto& e : r.timeline) {
    ++kinds[e.op.kind];
    if (e.op.kind == OpKind::kSsdRead && e.step == 0) reads.emplace_back(e.op.bytes, e.timing.start);
    if (e.op.kind == OpKind::kDecompress) {
      EXPECT_EQ(e.op.resource, ResourceClass::kCpu);
    }
  }
  EXPECT_EQ(r.ops, 14u);
  EXPECT_EQ(kinds[OpKind::kSsdRead], 4);
  EXPECT_EQ(kinds[OpKind::kDecompress], 2);
  EXPECT_EQ(kinds[OpKind::kTransfer], 2);
  EXPECT_EQ(kinds[OpKind::kExpertCompute], 3);
  EXPECT_EQ(kinds[OpKind::kDenseCompute], 3);
  ASSERT_EQ(reads.size(), 2u);
  std::sort(reads.begin(), reads.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_EQ(reads[0], std::make_pair(kHeaderBytes, 1.0));
  EXPECT_EQ(reads[1], std::make_pair(1'000'000 - kHeaderBytes, 3.0));
}

TEST(TwoPartLoads, WholeTensorsAreEveryClassicSystemsLayout) {
  // The same case through `offload`, whose layout is the default: a miss is one read of the whole tensor and
  // its transfer (dense 1 + read 2 + transfer 3 + compute 4 = 10 s).
  const test::SystemRun run = test::run_three_steps("offload", "lru", 1);
  EXPECT_DOUBLE_EQ(run.result.steps[0].end - run.result.steps[0].start, 10);
  EXPECT_EQ(run.result.ops, 10u);
  // It holds no partial state: a prefetch into one is refused, not loaded as something else.
  OpGraph g;
  std::vector<uint32_t> tails;
  TensorLoad load;
  load.bytes = 100;
  load.to = ExpertState::kSM;
  EXPECT_THROW(whole_tensor_loads().add_load(load, g, tails), Error);
  EXPECT_EQ(g.size(), 0u);
}

}  // namespace
}  // namespace moesim
