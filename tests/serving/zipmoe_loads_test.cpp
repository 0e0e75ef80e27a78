// ZipMoE's split-tensor loads (serving/zipmoe_loads.h), op by op on a worked example: a 1000-byte tensor,
// SM-chunk half of it (500 bytes), the 500 exponent bytes in K = 3 shards of 167, 167 and 166 raw bytes,
// read compressed at rho = 0.5 as ceil(83.5) = 84, 84 and 83 bytes.
#include "serving/zipmoe_loads.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"

namespace moesim {
namespace {

struct Built {
  std::string ops;  // one token per op: kind letter, bytes, "+r" and the read bytes of a fused read
  std::vector<uint32_t> tails;
  OpGraph g;
};

Built build(ExpertState from, ExpertState to, bool fused, ResourceClass recover_on = ResourceClass::kGpu,
            ResourceClass compute_on = ResourceClass::kGpu) {
  TensorLayout layout;
  layout.compressed = true;
  layout.shards = 3;
  layout.sm_fraction = 0.5;
  layout.e_ratio = 0.5;
  const auto loads = serving::zipmoe_loads(layout, fused);
  TensorLoad load;
  load.bytes = 1000;
  load.from = from;
  load.to = to;
  load.recover_on = recover_on;
  load.compute_on = compute_on;
  Built b;
  loads->add_load(load, b.g, b.tails);
  for (uint32_t i = 0; i < b.g.size(); ++i) {
    const Op& o = b.g.op(i);
    const char* kind[] = {"read", "dc", "rec", "xfer", "compute", "dense"};
    b.ops += (b.ops.empty() ? "" : " ") + std::string(kind[static_cast<int>(o.kind)]) +
             (o.part == TensorPart::kSm ? "/sm" : "") + std::to_string(o.bytes) +
             (o.fused_read() ? "+r" + std::to_string(o.read_bytes) : "");
  }
  return b;
}

TEST(ZipMoeLoads, AMissReadsEveryChunkThenTransfersAndRecovers) {
  const Built thread = build(ExpertState::kMissed, ExpertState::kFull, false);
  EXPECT_EQ(thread.ops, "read84 dc167 read84 dc167 read83 dc166 read/sm500 xfer1000 rec1000");
  ASSERT_EQ(thread.tails.size(), 1u);
  EXPECT_EQ(thread.g.op(thread.tails[0]).kind, OpKind::kRecover);
  // Fused: each shard's read is its decompression's (on a CPU worker); the SM-chunk read stays an SSD read.
  const Built fused = build(ExpertState::kMissed, ExpertState::kFull, true);
  EXPECT_EQ(fused.ops, "dc167+r84 dc167+r84 dc166+r83 read/sm500 xfer1000 rec1000");
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(fused.g.op(i).resource, ResourceClass::kCpu);
}

TEST(ZipMoeLoads, CachedChunksAreNotReadAgain) {
  EXPECT_EQ(build(ExpertState::kCompressed, ExpertState::kFull, true).ops,
            "dc167 dc167 dc166 xfer1000 rec1000");
  EXPECT_EQ(build(ExpertState::kSM, ExpertState::kFull, false).ops,
            "read84 dc167 read84 dc167 read83 dc166 xfer1000 rec1000");
  EXPECT_EQ(build(ExpertState::kE, ExpertState::kFull, true).ops,
            "dc167 dc167 dc166 read/sm500 xfer1000 rec1000");
}

TEST(ZipMoeLoads, APrefetchKeptCompressedOnlyReadsWhatItWillHoldNeverFused) {
  const Built c = build(ExpertState::kMissed, ExpertState::kCompressed, true);
  EXPECT_EQ(c.ops, "read84 read84 read83 read/sm500");
  EXPECT_TRUE(c.tails.empty());
  EXPECT_EQ(build(ExpertState::kMissed, ExpertState::kSM, true).ops, "read/sm500");
  EXPECT_EQ(build(ExpertState::kMissed, ExpertState::kE, false).ops, "read84 read84 read83");
  EXPECT_EQ(build(ExpertState::kE, ExpertState::kCompressed, true).ops, "read/sm500");
}

TEST(ZipMoeLoads, RecoveryOnTheCpuComesBeforeTheTransferOrWithoutOne) {
  EXPECT_EQ(build(ExpertState::kCompressed, ExpertState::kFull, false, ResourceClass::kCpu).ops,
            "dc167 dc167 dc166 rec1000 xfer1000");
  const Built cpu =
      build(ExpertState::kCompressed, ExpertState::kFull, false, ResourceClass::kCpu, ResourceClass::kCpu);
  EXPECT_EQ(cpu.ops, "dc167 dc167 dc166 rec1000");
  EXPECT_EQ(cpu.g.op(cpu.tails[0]).resource, ResourceClass::kCpu);
}

TEST(ZipMoeLoads, AFullTensorHasNothingToLoad) {
  EXPECT_THROW(build(ExpertState::kFull, ExpertState::kFull, false), Error);
  TensorLayout whole;  // not the split: not ZipMoE's
  EXPECT_THROW(serving::zipmoe_loads(whole, false), Error);
  TensorLayout split;
  split.compressed = true;
  split.shards = 3;
  EXPECT_EQ(serving::zipmoe_loads(split, false)->shards(), 3u);
}

}  // namespace
}  // namespace moesim
